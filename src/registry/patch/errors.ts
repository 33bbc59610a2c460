/**
 * The error every patch function throws, carrying what the reference API server answers for it.
 *
 * Where the wording comes from (kubernetes/kubernetes, staging/src/k8s.io/apiserver/pkg/endpoints/
 * handlers/patch.go, and apimachinery pkg/api/errors NewGenericServerResponse):
 * - JSON patch that does not decode as a list of operations → `errors.NewBadRequest(err.Error())`:
 *   400 BadRequest with the Go decoder's text (with the default fieldValidation=Warn the handler
 *   first decodes strictly into `[]handlers.jsonPatchOp` and prefixes `error decoding patch: `).
 * - More than 10000 operations → 413 `Request entity too large: The allowed maximum operations in a
 *   JSON patch is 10000, got N`.
 * - Any operation that fails while applying (failed `test`, missing path on remove/replace, bad
 *   index, unknown op, missing member) → `NewGenericServerResponse(422, ...)`, which drops the
 *   library's text: 422 Invalid `the server rejected our request due to an error in our request`
 *   with empty details.
 * - Merge patch that is not a JSON object → 400 (`Invalid JSON Patch`, or the decoder's text).
 * - Strategic merge patch: `interpretStrategicMergePatchError` maps the bad-format errors to 400
 *   with their text, lists of lists and retainKeys mismatches to the generic 422, and returns every
 *   other error unchanged, which the server renders as a 500 Status with no reason and the raw text.
 */
import { StatusError, type StatusReason } from '../../api/status';

/**
 * - invalid: the patch document is malformed as a whole (400).
 * - operation: a JSON patch operation is malformed: unknown op, missing or ill-typed member (422).
 * - path: a JSON patch path or from does not resolve (missing member, index out of range) (422).
 * - test-failed: a JSON patch `test` operation did not match (422).
 * - too-large: more operations than the server accepts (413).
 * - unprocessable: a strategic merge patch the reference rejects with the generic 422.
 * - internal: a strategic merge patch error the reference passes through as a 500.
 */
export type PatchErrorKind = 'invalid' | 'operation' | 'path' | 'test-failed' | 'too-large' | 'unprocessable' | 'internal';

/** The reference's message for every 422 of a patch that could not be applied. */
export const UNPROCESSABLE_MESSAGE = 'the server rejected our request due to an error in our request';

/** The most operations a JSON patch may carry (the reference's maxJSONPatchOperations). */
export const MAX_JSON_PATCH_OPERATIONS = 10000;

const DEFAULT_CODE: Record<PatchErrorKind, number> = {
  invalid: 400,
  operation: 422,
  path: 422,
  'test-failed': 422,
  'too-large': 413,
  unprocessable: 422,
  internal: 500,
};

export class PatchError extends Error {
  /** HTTP status the reference answers. */
  readonly code: number;
  /** Status reason the reference answers; undefined for its reason-less 500s. */
  readonly reason: StatusReason | undefined;
  /**
   * What precisely went wrong (library-style text). The reference hides it for 422s; it is meant
   * for logs and tests. For 400 and 500 it equals `message`.
   */
  readonly detail: string;

  /**
   * @param message the client-facing message, worded as the reference server words it
   * @param opIndex JSON patch: index of the failing operation
   */
  constructor(
    readonly kind: PatchErrorKind,
    message: string,
    detail?: string,
    readonly opIndex?: number,
  ) {
    super(message);
    this.name = 'PatchError';
    this.code = DEFAULT_CODE[kind];
    this.reason =
      this.code === 400 ? 'BadRequest' : this.code === 422 ? 'Invalid' : this.code === 413 ? 'RequestEntityTooLarge' : undefined;
    this.detail = detail ?? message;
  }

  /** The Status error the reference answers (same code, reason, message and details). */
  toStatusError(): StatusError {
    // The reference's generic 422 carries an empty details object; its 400/413/500 carry none.
    // Its 500 for pass-through errors has no reason (StatusReasonUnknown, omitted in JSON).
    return new StatusError(this.code, this.reason as StatusReason, this.message, this.code === 422 ? {} : undefined);
  }
}

/** A 422 whose client-facing message is the reference's generic one. */
export function unprocessable(kind: 'operation' | 'path' | 'test-failed' | 'unprocessable', detail: string, opIndex?: number): PatchError {
  return new PatchError(kind, UNPROCESSABLE_MESSAGE, detail, opIndex);
}
