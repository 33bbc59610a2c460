/**
 * What a request asks of the registry: the options of writes (create, update, patch, apply),
 * lists and deletes, as the HTTP layer decodes them, and the registry's own tunables.
 */

import type { FieldRequirement, LabelSelector } from '../api/selectors';
import type { UserInfo } from '../api/user';
import type { OwnWriteSeats } from './own-writes';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

export interface WriteOptions {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  /** Warnings to send as `Warning: 299 - "..."` headers. */
  warnings: string[];
  /** Duplicate fields the body decoder found (reported like unknown fields). */
  duplicates?: string[];
  /** The field manager recorded in managedFields (`fieldManager`, else the user-agent prefix). */
  fieldManager?: string;
  /** The user asking (admission's request.userInfo); absent for the server's own writes. */
  user?: UserInfo;
  /** The request is a PATCH (admission sees PatchOptions rather than UpdateOptions). */
  patch?: boolean;
  /** The request's audit annotations (admission adds to them). */
  auditAnnotations?: Record<string, string>;
  /**
   * A best-effort write of the server's own (an event): it waits for an own-write seat behind the
   * others (own-writes.ts), so that events never hold back the writes they describe.
   */
  background?: boolean;
}

export type PatchType = 'json-patch' | 'merge-patch' | 'strategic-merge-patch' | 'apply-patch';

/**
 * The subresource a write goes through ('' : the main resource); any other name is one of the
 * kind's partial subresources (KindDef.subresources: a CSR's approval, pods/ephemeralcontainers).
 */
export type Subresource = '' | 'status' | 'finalize' | 'binding' | (string & {});

export interface ListOptions {
  labelSelector: LabelSelector;
  fieldSelector: FieldRequirement[];
  hasSelectors: boolean;
  limit: number;
  continueToken: string;
  resourceVersion: string;
  resourceVersionMatch: '' | 'Exact' | 'NotOlderThan';
}

export interface DeleteOptions {
  /** Remove an object whose stored bytes cannot be decoded (gate AllowUnsafeMalformedObjectDeletion). */
  ignoreStoreReadError?: boolean;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  dryRun: boolean;
  /** The user asking (admission's request.userInfo). */
  user?: UserInfo;
  /** Warnings for the response, from admission. */
  warnings?: string[];
  /** The request's audit annotations (admission adds to them). */
  auditAnnotations?: Record<string, string>;
}

export interface RegistryOptions {
  clock?: () => number;
  /** How long a "not older than"/"exact" read waits for a revision the store has not reached. */
  futureRevisionWait?: number;
  /** Lifetime of continue tokens (the reference's compaction interval). */
  continueTtlMs?: number;
  /** The seats of the server's own writes (writes without a user), shared by every resource. */
  ownWrites?: OwnWriteSeats;
}
