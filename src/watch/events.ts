/**
 * What the watch cache holds and hands out: one object of its current state (CachedObject), one
 * change of one object (CacheEvent), and the selector view both are matched by. Each keeps the
 * stored bytes it was made from; parsed forms and texts are made when asked for (and, for a
 * recent event, held while the fan-out needs them).
 */
import type { Obj } from '../api/meta';
import { decodeStoredAt, storedTextAt } from '../codec/stored';
import { type HeldValue, PackedValue, rawOf } from '../store/packed';
import type { Revision } from '../store/types';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

/**
 * What selectors look at, kept for every cached object and event so that matching never needs
 * the parsed object: name, namespace, labels and the kind's selectable fields (field selector
 * name → value; metadata.name and metadata.namespace are answered from the first two).
 */
export interface SelectorView {
  name: string;
  namespace: string;
  /** metadata.uid ('' if none): what the garbage collector's first pass needs of a plain object. */
  uid: string;
  labels: Record<string, string> | undefined;
  fields: Record<string, string> | undefined;
}

/** The view of an object: name, namespace, labels (the kind's selectable fields come from `fields`). */
export function selectorView(o: Obj, fields?: (o: Obj) => Record<string, string> | undefined): SelectorView {
  const m = o.metadata;
  return { name: m.name ?? '', namespace: m.namespace ?? '', uid: m.uid ?? '', labels: m.labels, fields: fields?.(o) };
}

function viewOrEmpty(o: Obj, fields?: (o: Obj) => Record<string, string> | undefined): SelectorView {
  try {
    return selectorView(o, fields);
  } catch {
    return EMPTY_VIEW;
  }
}

/** A field selector's field of a view ('' when the kind has no such field or the object no value). */
export function viewField(v: SelectorView, field: string): string {
  if (field === 'metadata.name') return v.name;
  if (field === 'metadata.namespace') return v.namespace;
  return v.fields?.[field] ?? '';
}

/**
 * One object of the cache's current state. It holds the stored bytes (the same bytes the
 * embedded store holds for the key's newest version: no second copy) and its selector view;
 * its JSON text (with resourceVersion) and its parsed form are made when asked for, as for an
 * object read from the store. Caches of the kinds the server itself reads on every request
 * (admission configuration, authorization, flow control) keep the parsed form (`keepParsed`).
 */
/**
 * A cache's cold values as its objects see them: a packed object that clients read twice within
 * `windowMs` is held raw again (`reheated`), so that a collection listed over and over (a flood of
 * identical LISTs, a dashboard's poll) is not inflated on every read.
 */
export interface ColdReads {
  readonly windowMs: number;
  now(): number;
  /**
   * Whether `key`'s version `rv`, packed as `packed`, may be held raw again (`length` bytes) from
   * now on: not when the process's budget for such bytes is spent.
   */
  reheated(key: string, rv: Revision, packed: PackedValue, length: number): boolean;
}

/** What the objects of one cache share. */
export interface ObjectFamily {
  /** The kind's selectable fields of an object (field selector name → value), for the views. */
  readonly fields?: ((o: Obj) => Record<string, string> | undefined) | undefined;
  /** The cache's cold values, when it packs them. */
  readonly cold?: ColdReads | undefined;
}

export class CachedObject {
  private v: SelectorView | undefined;
  private memo: WeakRef<Obj> | undefined;
  /** When a client last read the object while it was packed (-Infinity: not since it was packed). */
  private coldReadAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly key: string,
    readonly rv: Revision,
    /** The stored bytes, or their packed form once the object is cold (see WatchCache.packCold). */
    private held: HeldValue,
    view: SelectorView | undefined,
    private readonly parsed: Obj | undefined,
    private readonly family?: ObjectFamily,
  ) {
    this.v = view;
  }

  /** The stored bytes (inflated anew on each read when packed: read once per use). */
  get value(): Uint8Array {
    return rawOf(this.held);
  }

  /**
   * The stored bytes for a client's read (a LIST's item): as `value`, and a packed object read so
   * for the second time within the cache's cold window is held raw again (within the process's
   * budget for such bytes) until it goes unread for that long. Readers in the server (controllers) use `value`: their reads would otherwise
   * keep most of a large cluster's objects raw.
   */
  get served(): Uint8Array {
    const h = this.held;
    if (!(h instanceof PackedValue)) return h;
    return this.readCold(h) ?? h.inflate();
  }

  /** As `served`, for a reader that takes packed bytes (the codec pool inflates them). */
  get servedHeld(): HeldValue {
    const h = this.held;
    if (!(h instanceof PackedValue)) return h;
    return this.readCold(h) ?? h;
  }

  /** A client's read of the packed `h`: the raw bytes if it makes the object hot again, else undefined. */
  private readCold(h: PackedValue): Uint8Array | undefined {
    const cold = this.family?.cold;
    if (cold === undefined) return undefined;
    const now = cold.now();
    if (now - this.coldReadAt > cold.windowMs) {
      this.coldReadAt = now;
      return undefined;
    }
    const raw = h.inflate();
    if (cold.reheated(this.key, this.rv, h, raw.length)) {
      this.held = raw;
      this.coldReadAt = Number.NEGATIVE_INFINITY;
    } else {
      this.coldReadAt = now;
    }
    return raw;
  }

  /** The stored bytes' length (without inflating packed ones). */
  get size(): number {
    return this.held.length;
  }

  /** The bytes as held: raw, or packed. */
  get heldValue(): HeldValue {
    return this.held;
  }

  /** The stored bytes if held raw, else undefined (packing reads them without inflating). */
  get rawIfHeld(): Uint8Array | undefined {
    return this.held instanceof PackedValue ? undefined : this.held;
  }

  /** Hold the bytes packed from now on (`p` must be their packed form). */
  pack(p: PackedValue): void {
    this.held = p;
    this.coldReadAt = Number.NEGATIVE_INFINITY;
  }

  /**
   * The selector view. Objects loaded when the cache starts get theirs when first asked for (a
   * selector, the garbage collector's owner check): a restart with 1M objects parsed each one
   * just for this. An object that cannot be parsed has an empty view (no labels, no fields).
   */
  get view(): SelectorView {
    this.v ??= viewOfStored(this.key, this.value, this.rv, this.family?.fields);
    return this.v;
  }

  /** The view if something already made it (a selector, the garbage collector), else undefined. */
  get viewIfMade(): SelectorView | undefined {
    return this.v;
  }

  /** The object's JSON text with resourceVersion (built on each call; our recent writes' is shared). */
  get text(): string {
    return storedTextAt(this.key, this.value, this.rv);
  }

  /** The parsed object (a new one on each call unless the cache keeps them: treat it as read-only). */
  get obj(): Obj {
    return this.parsed ?? decodeStoredAt(this.key, this.value, this.rv);
  }

  /**
   * The parsed object, shared with every other caller of `shared` while something holds it
   * (until a garbage collection finds none does): for readers that only read, such as a
   * ReplicaSet controller reading its pods on each sync. Never change it.
   */
  get shared(): Obj {
    if (this.parsed !== undefined) return this.parsed;
    const o = this.memo?.deref();
    if (o !== undefined) return o;
    const n = decodeStoredAt(this.key, this.value, this.rv);
    this.memo = new WeakRef(n);
    return n;
  }
}

/**
 * One change of one object, as the cache saw it. The event keeps the stored bytes of the
 * version it carries (a DELETED event: the deleted version's, with the delete's revision) and,
 * for an update or delete, those of the version before, plus both selector views. Its parsed
 * forms and text are held only while the event is recent (HOT_MS): fan-out matches and encodes
 * it at once, and watchers keep what they queued. An older event decodes its bytes again when a
 * watch resuming from far back needs them. Without this, every update kept a parsed copy and a
 * text of the object for the whole history window (~7 KB of RSS per update of a 1 KB
 * ConfigMap, with the store's own history).
 */
export class CacheEvent {
  /**
   * The event's watch encodings, built once and shared by every watcher that gets it, by
   * encoding and type (`json:ADDED`, `protobuf:DELETED`; see src/http/watch-handler.ts).
   */
  encoded?: Record<string, Uint8Array>;
  private o: Obj | undefined;
  private p: Obj | undefined;
  private t: string | undefined;
  private v: SelectorView | undefined;
  private pv: SelectorView | undefined;
  /** No longer recent: its parsed forms are not kept (see release). */
  private released = false;

  constructor(
    /** What happened in the store; watchers may see it as another type after filtering. */
    readonly type: EventType,
    readonly rv: Revision,
    readonly key: string,
    /** The stored bytes of the object the event carries (packed when its object was cold). */
    private readonly held: HeldValue,
    view: SelectorView | undefined,
    text: string | undefined,
    obj: Obj | undefined,
    /** The previous version (for selector transitions): its bytes, revision, view; absent on create. */
    private readonly prevHeld: HeldValue | undefined,
    private readonly prevRv: Revision,
    prevView: SelectorView | undefined,
    prev: Obj | undefined,
    /** When the cache received it (ms), for the time-based history window. */
    readonly at: number,
    /** The kind's selectable fields, to make the views when a selector asks. */
    private readonly fields?: (o: Obj) => Record<string, string> | undefined,
  ) {
    this.t = text;
    this.o = obj;
    this.p = prev;
    this.v = view;
    this.pv = prevView;
  }

  /** The stored bytes of the object the event carries. */
  get value(): Uint8Array {
    return rawOf(this.held);
  }

  /** The previous version's stored bytes; undefined on create. */
  get prevValue(): Uint8Array | undefined {
    return this.prevHeld === undefined ? undefined : rawOf(this.prevHeld);
  }

  /**
   * The object's selector view, made when a watcher with a selector first asks (watches without
   * selectors never do), from the parsed object while the event is recent, else from its bytes.
   */
  get view(): SelectorView {
    if (this.v === undefined) this.v = this.o ? viewOrEmpty(this.o, this.fields) : viewOfStored(this.key, this.value, this.rv, this.fields);
    return this.v;
  }

  /** The previous version's view (for selector transitions); undefined on create. */
  get prevView(): SelectorView | undefined {
    if (this.pv === undefined && this.prevHeld !== undefined)
      this.pv = this.p ? viewOrEmpty(this.p, this.fields) : viewOfStored(this.key, rawOf(this.prevHeld), this.prevRv, this.fields);
    return this.pv;
  }

  /** The object's JSON text with this event's resourceVersion. */
  get text(): string {
    return this.t ?? storedTextAt(this.key, this.value, this.rv);
  }

  /**
   * The parsed object, shared by every reader while the event is recent (treat it as read-only).
   * A delete's (and a change written elsewhere's) is parsed on first use and kept until the event
   * is released: each of the dozen controllers following pods parsed a deleted pod again, 38% of
   * the main thread while the density scenario's Deployments were deleted (2026-11-27).
   */
  get obj(): Obj {
    if (this.o !== undefined) return this.o;
    const o = decodeStoredAt(this.key, this.value, this.rv);
    if (!this.released) this.o = o;
    return o;
  }

  /** The previous version (for selector transitions); undefined on create. Kept as `obj`. */
  get prev(): Obj | undefined {
    if (this.p !== undefined || this.prevHeld === undefined) return this.p;
    const p = decodeStoredAt(this.key, rawOf(this.prevHeld), this.prevRv);
    if (!this.released) this.p = p;
    return p;
  }

  /** Whether it carries a previous version (an update or a delete). */
  get hasPrev(): boolean {
    return this.prevHeld !== undefined;
  }

  /** The bytes it holds (the object's and, for an update, the previous version's). */
  bytes(): number {
    return this.held.length + (this.prevHeld?.length ?? 0);
  }

  /** Drop the parsed objects (read again, they are parsed and kept until release). */
  dropParsed(): void {
    this.o = undefined;
    this.p = undefined;
  }

  /** Drop the parsed forms, the text and encoded lines (the bytes stay): the event is no longer recent. */
  release(): void {
    this.released = true;
    this.o = undefined;
    this.p = undefined;
    this.t = undefined;
    this.v = undefined;
    this.pv = undefined;
    this.encoded = undefined;
    exits.delete(this);
  }
}

const EMPTY_VIEW: SelectorView = Object.freeze({ name: '', namespace: '', uid: '', labels: undefined, fields: undefined });

/** The view of stored bytes; an object that cannot be parsed has an empty view (no labels, no fields). */
function viewOfStored(
  key: string,
  value: Uint8Array,
  rv: Revision,
  fields: ((o: Obj) => Record<string, string> | undefined) | undefined,
): SelectorView {
  try {
    return selectorView(decodeStoredAt(key, value, rv), fields);
  } catch {
    return EMPTY_VIEW;
  }
}

/** The DELETED form of an update that moved an object out of a selection (built once per event). */
const exits = new WeakMap<CacheEvent, { obj: Obj; text: string }>();
export function exitedSelection(e: CacheEvent): { obj: Obj; text: string } {
  let x = exits.get(e);
  if (!x) {
    const prev = e.prev as Obj;
    const obj: Obj = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(e.rv) } };
    x = { obj, text: JSON.stringify(obj) };
    exits.set(e, x);
  }
  return x;
}
