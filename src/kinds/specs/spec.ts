/**
 * The description of a built-in kind, as src/kinds/specs/<group>.ts list them: names, scope and
 * subresources are the reference's; the schema comes from src/schema/generated. `rules` (the
 * validation and preparation the schema cannot say) and `columns` (the table kubectl shows) sit
 * with the kind; older kinds still take theirs from src/kinds/strategies.ts and columns.ts.
 */
import type { Obj } from '../../api/meta';
import type { NameRule } from '../../api/validation';
import type { Column } from '../../codec/table';
import type { StatusLike, StoredAs, Strategy } from '../../registry/kind';

export interface Spec {
  group?: string;
  version?: string;
  kind: string;
  plural: string;
  shortNames?: string[];
  categories?: string[];
  namespaced: boolean;
  status?: boolean;
  scale?: boolean;
  /** spec.selector is a label map, not a LabelSelector (the Scale's status.selector, see KindDef). */
  scaleSelectorMap?: boolean;
  finalize?: boolean;
  deleteCollection?: boolean;
  nameRule?: NameRule;
  returnDeletedObject?: boolean;
  /**
   * metadata.generation: by default kinds with a spec have it; the reference does not set it for
   * Namespace, Pod, Node, Service, LimitRange, ResourceQuota and Lease, which say false here.
   */
  generation?: boolean;
  /** Schema package: io.svc.api.<pkg>.<version>.<Kind>. */
  pkg: string;
  /** The schema's full name where it is not under io.svc.api (apiextensions). */
  schema?: string;
  /** Create-only, answered and not stored (access reviews). */
  virtual?: boolean;
  fields?: Record<string, (o: Obj) => string>;
  /** Validation and preparation rules of the kind (merged over strategies.ts's entry, if any). */
  rules?: Strategy;
  /** Status-like subresources (a CertificateSigningRequest's approval; `status` where it keeps more than the spec). */
  subresources?: Record<string, StatusLike>;
  /** Table columns after Name (instead of columns.ts's entry). */
  columns?: Column[];
  /** Subresources writing part of the spec (pods/ephemeralcontainers, pods/resize). */
  /** The status is a plain struct in the reference: objects show `status: {}` from creation on. */
  emptyStatus?: boolean;
  /** Get and list only, made by the server at each read (KindDef.computed). */
  computed?: boolean;
  /** The Warning every response carries (a deprecated kind). */
  deprecation?: string;
  /** The feature gate that must be on for the kind to be served (absent: always served). */
  gate?: string;
  /** Served in this form, stored as another kind (KindDef.storedAs). */
  storedAs?: StoredAs;
}

type Path = (o: Obj) => unknown;
export const at =
  (...path: string[]): Path =>
  (o) => {
    let v: unknown = o;
    for (const p of path) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[p] : undefined;
    return v;
  };
export const str = (p: Path) => (o: Obj) => {
  const v = p(o);
  return v === undefined || v === null ? '' : String(v);
};
