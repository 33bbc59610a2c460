/** events.svc.io/v1 Event: the stored core/v1 Events in the newer API's form (src/kinds/conversion/events.ts). */
import type { Obj } from '../../api/meta';
import { columnsFor } from '../columns';
import { eventFromCore, eventToCore } from '../conversion/events';
import { eventsV1Event } from '../validation/events';
import type { Spec } from './spec';

const asCore = (x: Obj): Obj => (x.apiVersion === 'v1' ? x : eventToCore(x));

export const EVENTS: Spec[] = [
  {
    group: 'events.svc.io',
    kind: 'Event',
    plural: 'events',
    shortNames: ['ev'],
    namespaced: true,
    generation: false,
    pkg: 'events',
    rules: eventsV1Event,
    // The reference prints both views with one printer (the internal Event's).
    columns: columnsFor('Event').map((c) => ({ ...c, cell: (x, now) => c.cell(asCore(x), now) })),
    storedAs: { group: '', plural: 'events', read: eventFromCore, write: eventToCore },
  },
];
