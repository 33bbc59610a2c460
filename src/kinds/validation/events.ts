/**
 * events.k8s.io/v1 Event rules (pkg/apis/core/validation/events.go, ValidateEventCreate/Update
 * for requests in events.k8s.io/v1): the legacy rules every Event passes, then the strict ones of
 * the newer API. They run on the core/v1 form the object is stored in, so paths name its fields
 * (`reportingController` is the Go name the reference prints).
 */
import { deepEqual, type Obj } from '../../api/meta';
import { invalidValue, required } from '../../api/validation';
import type { Strategy } from '../../registry/kind';
import { eventToCore } from '../conversion/events';
import { type Errs, type J, obj, str } from './common';
import { validateEvent } from './core';

function series(e: J, errs: Errs): void {
  const s = obj(e.series);
  if (!s) return;
  if (typeof s.count !== 'number' || s.count < 2) errs.push(invalidValue('series.count', '', 'should be at least 2'));
  if (!s.lastObservedTime) errs.push(required('series.lastObservedTime'));
}

function validateCreate(e: J): Errs {
  const errs: Errs = [];
  series(e, errs);
  if (!e.eventTime) errs.push(required('eventTime'));
  if (e.type !== 'Normal' && e.type !== 'Warning') errs.push(invalidValue('type', '', `has invalid value: ${str(e.type)}`));
  if (e.firstTimestamp) errs.push(invalidValue('firstTimestamp', '', 'needs to be unset'));
  if (e.lastTimestamp) errs.push(invalidValue('lastTimestamp', '', 'needs to be unset'));
  if (typeof e.count === 'number' && e.count !== 0) errs.push(invalidValue('count', '', 'needs to be unset'));
  const src = obj(e.source);
  if (str(src?.component) !== '' || str(src?.host) !== '') errs.push(invalidValue('source', '', 'needs to be unset'));
  return errs;
}

const IMMUTABLE: [string, string][] = [
  ['involvedObject', 'involvedObject'],
  ['reason', 'reason'],
  ['message', 'message'],
  ['source', 'source'],
  ['firstTimestamp', 'firstTimestamp'],
  ['lastTimestamp', 'lastTimestamp'],
  ['count', 'count'],
  ['type', 'type'],
  ['eventTime', 'eventTime'],
  ['action', 'action'],
  ['related', 'related'],
  ['reportingComponent', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
];

function validateUpdate(e: J, old: J): Errs {
  const errs: Errs = [];
  if (!deepEqual(e.series, old.series)) series(e, errs);
  for (const [field, path] of IMMUTABLE) {
    if (!deepEqual(e[field], old[field])) errs.push(invalidValue(path, e[field] ?? '', 'field is immutable'));
  }
  return errs;
}

export const eventsV1Event: Strategy = {
  validate(o: Obj, old?: Obj): Errs {
    const e = eventToCore(o);
    const errs = validateEvent(e);
    errs.push(...(old ? validateUpdate(e as J, eventToCore(old) as J) : validateCreate(e as J)));
    return errs;
  },
};
