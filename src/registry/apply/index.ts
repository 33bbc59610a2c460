/**
 * Server-side apply and managedFields: field sets (FieldsV1), the apply merge with conflict
 * detection, ownership recording for non-apply writes, and the conflict Status.
 */

export {
  type ApplyConflict,
  ApplyConflictError,
  type ApplyOptions,
  type ApplyResult,
  apply,
  checkApplyManagedFields,
  checkApplyType,
  conflictStatus,
  fieldSetOf,
  type WriteOptions,
} from './apply';
export { mergeApplyConfiguration } from './apply-configuration';
export {
  decodeFieldsV1,
  encodeFieldsV1,
  FieldSet,
  fieldPE,
  indexPE,
  keyPE,
  type Path,
  type PathElement,
  parsePE,
  pathString,
  serializePE,
  valuePE,
} from './fieldset';
export { applyAfterClientSideApply, LAST_APPLIED } from './last-applied';
export {
  capUpdateManagers,
  decodeManagedFields,
  encodeManagedFields,
  isResetManagedFields,
  MAX_UPDATE_MANAGERS,
  type Managed,
  type ManagedEntry,
  ManagedFieldsError,
  managerId,
  type Operation,
  STRIPPED_FIELDS,
} from './managed-fields';
export { TypedValueError } from './typed';
export { recordUpdate, recordUpdateSlow } from './update';
