/**
 * CRD conversion webhooks (the reference's apiextensions-apiserver webhook_converter.go): a CRD
 * with `spec.conversion.strategy: Webhook` serves its non-storage versions through a value
 * mapping (src/store/mapped-async.ts) whose conversions are ConversionReviews sent to
 * `spec.conversion.webhook.clientConfig` (a URL or a Service, as admission webhooks reach them,
 * src/admission/webhook/client.ts). Values read together are converted in one review (a list's
 * page, a watch batch); objects already in the desired version are not sent.
 *
 * The answer is checked as the reference checks it (uid, count, apiVersion and kind of each
 * object, metadata: only labels and annotations may change, the rest is restored from the input).
 * A failure is a 500 with the reference's words:
 *
 *   Internal error occurred: conversion webhook for example.com/v1, Kind=Widget failed: Post "https://...": ...
 */
import { isObject, type JsonObject, type Obj } from '../../api/meta';
import { StatusError } from '../../api/status';
import { stringifyStored } from '../../codec/stringify';
import type { AsyncValueMapping } from '../../store/mapped-async';
import { valueSlabs } from '../../store/slabs';
import { post, type ServiceResolver, target } from './client';
import type { ClientConfig } from './hooks';

/** The reference's timeout of a conversion webhook call. */
const TIMEOUT_SECONDS = 30;

const dec = new TextDecoder();

export interface ConversionTarget {
  group: string;
  kind: string;
  /** The version this view serves. */
  version: string;
  storageVersion: string;
  /** spec.conversion.webhook of the CRD. */
  webhook: JsonObject;
}

function clientConfigOf(w: JsonObject): ClientConfig {
  const c = isObject(w.clientConfig) ? w.clientConfig : {};
  const caBundle = typeof c.caBundle === 'string' && c.caBundle !== '' ? c.caBundle : undefined;
  if (isObject(c.service)) {
    const s = c.service;
    return {
      service: {
        namespace: String(s.namespace ?? ''),
        name: String(s.name ?? ''),
        port: typeof s.port === 'number' ? s.port : 443,
        path: typeof s.path === 'string' ? s.path : '',
      },
      caBundle,
    };
  }
  return { url: typeof c.url === 'string' ? c.url : '', caBundle };
}

/**
 * The apiVersion of a stored value from its first bytes (the registry writes kind, apiVersion,
 * metadata first); undefined when it is not there.
 */
function headApiVersion(v: Uint8Array): string | undefined {
  const head = dec.decode(v.subarray(0, 256));
  const m = /^\{"kind":"(?:[^"\\]|\\.)*","apiVersion":"([^"\\]*)"/.exec(head);
  return m?.[1];
}

const failure = (message: string) =>
  new StatusError(500, 'InternalError', `Internal error occurred: ${message}`, { causes: [{ message }] });

export class ConversionWebhooks {
  constructor(
    private readonly resolve: ServiceResolver,
    private readonly log: (msg: string) => void,
  ) {}

  /** The objects converted to `desired` (`group/version`), in order; throws a 500 StatusError. */
  async convert(t: ConversionTarget, desired: string, objects: Obj[]): Promise<Obj[]> {
    const out = [...objects];
    const send: number[] = [];
    objects.forEach((o, i) => {
      if (o.apiVersion !== desired) send.push(i);
    });
    if (send.length === 0) return out;
    const first = objects[send[0] as number] as Obj;
    const what = `${first.apiVersion}, Kind=${first.kind}`;
    const fail = (why: string) => failure(`conversion webhook for ${what} failed: ${why}`);
    const versions = Array.isArray(t.webhook.conversionReviewVersions) ? t.webhook.conversionReviewVersions : [];
    const version = versions.find((v) => v === 'v1' || v === 'v1beta1') as 'v1' | 'v1beta1' | undefined;
    if (!version) throw fail(`webhook does not accept known ConversionReview versions (v1, v1beta1)`);
    const uid = crypto.randomUUID();
    const review = {
      kind: 'ConversionReview',
      apiVersion: `apiextensions.k8s.io/${version}`,
      request: { uid, desiredAPIVersion: desired, objects: send.map((i) => objects[i]) },
    };
    const cc = clientConfigOf(t.webhook);
    let body: unknown;
    try {
      const to = target(cc, cc.caBundle, TIMEOUT_SECONDS, this.resolve);
      body = await post(to, JSON.stringify(review), TIMEOUT_SECONDS * 1000);
    } catch (e) {
      throw fail((e as Error).message);
    }
    const r = isObject(body) ? body : {};
    if (version === 'v1' && (r.apiVersion !== 'apiextensions.k8s.io/v1' || r.kind !== 'ConversionReview'))
      throw fail(
        `expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got ${r.apiVersion ?? ''}, Kind=${r.kind ?? ''}`,
      );
    const resp = isObject(r.response) ? r.response : undefined;
    if (!resp) throw fail('no response provided');
    if (version === 'v1' && resp.uid !== uid) throw fail(`expected response.uid="${uid}", got "${String(resp.uid ?? '')}"`);
    const result = isObject(resp.result) ? resp.result : {};
    if (result.status !== 'Success') {
      throw fail(
        typeof result.message === 'string' && result.message !== ''
          ? result.message
          : `response.result.status was '${String(result.status ?? '')}', not 'Success'`,
      );
    }
    const converted = Array.isArray(resp.convertedObjects) ? resp.convertedObjects : [];
    if (converted.length !== send.length)
      throw failure(`conversion webhook for ${what} returned ${converted.length} objects, expected ${send.length}`);
    send.forEach((at, j) => {
      const input = objects[at] as Obj;
      const c = converted[j];
      if (!isObject(c) || !isObject(c.metadata))
        throw failure(`conversion webhook for ${what} returned invalid object at index ${j}: not an object with metadata`);
      if (c.apiVersion !== desired)
        throw failure(
          `conversion webhook for ${what} returned invalid converted object at index ${j}: invalid groupVersion (expected ${desired}, received ${String(c.apiVersion ?? '')})`,
        );
      if (c.kind !== input.kind)
        throw failure(
          `conversion webhook for ${what} returned invalid converted object at index ${j}: invalid kind (expected ${input.kind}, received ${String(c.kind ?? '')})`,
        );
      const m = c.metadata;
      for (const k of ['name', 'namespace', 'uid'] as const) {
        if ((m[k] ?? undefined) !== (input.metadata[k] ?? undefined))
          throw failure(`conversion webhook for ${what} returned invalid metadata in object at index ${j}: must not change metadata.${k}`);
      }
      // The reference restores the input's metadata, taking only labels and annotations.
      const metadata: Record<string, unknown> = { ...input.metadata };
      if (m.labels !== undefined) metadata.labels = m.labels;
      else delete metadata.labels;
      if (m.annotations !== undefined) metadata.annotations = m.annotations;
      else delete metadata.annotations;
      out[at] = { ...c, metadata } as Obj;
    });
    return out;
  }

  /** The value mapping of one served version of a CRD converted by its webhook. */
  mapping(t: ConversionTarget): AsyncValueMapping {
    const view = `${t.group}/${t.version}`;
    const storage = `${t.group}/${t.storageVersion}`;
    const encode = (o: Obj): Uint8Array => {
      const { kind, apiVersion, metadata, ...rest } = o;
      return valueSlabs.encode(stringifyStored(kind, apiVersion, metadata as Record<string, unknown>, rest));
    };
    const decode = (v: Uint8Array): Obj => JSON.parse(dec.decode(v)) as Obj;
    // Values already in the wanted version (most of them: those stored since the storage version
    // last changed) pass through unparsed.
    const readMany = async (values: Uint8Array[]): Promise<Uint8Array[]> => {
      const out = [...values];
      const at: number[] = [];
      values.forEach((v, i) => {
        if (headApiVersion(v) !== view) at.push(i);
      });
      if (at.length === 0) return out;
      const converted = await this.convert(
        t,
        view,
        at.map((i) => decode(values[i] as Uint8Array)),
      );
      at.forEach((i, j) => {
        out[i] = encode(converted[j] as Obj);
      });
      return out;
    };
    return {
      readMany,
      write: async (value) =>
        headApiVersion(value) === storage ? value : encode(((await this.convert(t, storage, [decode(value)])) as Obj[])[0] as Obj),
      log: this.log,
    };
  }
}
