/**
 * Who a request is from, as authentication found it (the reference's user.Info): what
 * authorization, admission, priority and fairness and the registry's managed fields read.
 */
export interface UserInfo {
  name: string;
  uid: string;
  groups: string[];
  /** Extra attributes (Impersonate-Extra-<key> headers). */
  extra?: Record<string, string[]>;
}
