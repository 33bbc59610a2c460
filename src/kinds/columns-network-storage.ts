/**
 * Table columns of the networking (Ingress, IngressClass, IPAddress, ServiceCIDR), discovery
 * (EndpointSlice), node (RuntimeClass) and storage kinds, as the reference's printers print them
 * (pkg/printers/internalversion). The server prints tables wide: nothing is clipped.
 */
import { formatQuantity, parseQuantity } from '../api/quantity';
import type { Column } from '../codec/table';
import { type Descriptions, loadDescriptions } from '../schema/descriptions';
import { AGE, col, NAME_DESCRIPTION } from './columns';
import { type J, list, map } from './validation/common';

const s = (v: unknown): string => (typeof v === 'string' ? v : '');
/** The kinds whose fields sit at the top level (no spec). */
const top = (x: unknown): J => x as J;

let docs: Descriptions | undefined;

/**
 * A column the reference describes with a field's documentation (SwaggerDoc): the text comes
 * from the schema's descriptions, read when a table is first asked for (not at start).
 */
function docCol(name: string, type: Column['type'], def: string, field: string, cell: Column['cell'], format?: string): Column {
  return {
    name,
    type,
    priority: 0,
    cell,
    ...(format ? { format } : {}),
    get description() {
      docs ??= loadDescriptions();
      return docs[`io.svc.api.${def}`]?.properties?.[field] ?? '';
    },
  };
}

const NAME: Column = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: NAME_DESCRIPTION,
  priority: 0,
  cell: (x) => x.metadata.name ?? '',
};

/** listWithMoreString: up to three items, then "+ N more...", "<unset>" when none. */
function upToThree(items: string[]): string {
  if (items.length > 3) return `${items.slice(0, 3).join(',')} + ${items.length - 3} more...`;
  return items.length === 0 ? '<unset>' : items.join(',');
}

// ---- networking -------------------------------------------------------------------------------

/**
 * formatHosts: the rules' non-empty hosts, up to three ("*" when none); past three, "+ N more..."
 * counts the rules, not the hosts.
 */
function ingressHosts(rules: J[]): string {
  const hosts: string[] = [];
  let more = false;
  for (const r of rules) {
    if (hosts.length === 3) more = true;
    if (!more && s(r.host) !== '') hosts.push(s(r.host));
  }
  if (hosts.length === 0) return '*';
  return more ? `${hosts.join(',')} + ${rules.length - 3} more...` : hosts.join(',');
}

/** ingressLoadBalancerStatusStringer (wide): the IPs (else hostnames) of the load balancer, sorted, once each. */
function ingressAddress(status: J): string {
  const set = new Set(
    list<J>(map(status.loadBalancer).ingress)
      .map((i) => s(i.ip) || s(i.hostname))
      .filter((x) => x !== ''),
  );
  return [...set].sort().join(',');
}

export const INGRESS: Column[] = [
  col('Class', 'string', 'The name of the IngressClass resource that should be used for additional configuration', (x) =>
    typeof map(x.spec).ingressClassName === 'string' ? s(map(x.spec).ingressClassName) : '<none>',
  ),
  col('Hosts', 'string', 'Hosts that incoming requests are matched against before the ingress rule', (x) =>
    ingressHosts(list<J>(map(x.spec).rules)),
  ),
  col('Address', 'string', 'Address is a list containing ingress points for the load-balancer', (x) => ingressAddress(map(x.status))),
  col('Ports', 'string', 'Ports of TLS configurations that open', (x) => (list(map(x.spec).tls).length > 0 ? '80, 443' : '80')),
  AGE,
];

export const INGRESS_CLASS: Column[] = [
  col('Controller', 'string', 'Controller that is responsible for handling this class', (x) => s(map(x.spec).controller)),
  col('Parameters', 'string', 'A reference to a resource with additional parameters', (x) => {
    const p = map(x.spec).parameters;
    if (p === undefined || p === null) return '<none>';
    const ref = map(p);
    const kind = typeof ref.apiGroup === 'string' ? `${s(ref.kind)}.${ref.apiGroup}` : s(ref.kind);
    return `${kind}/${s(ref.name)}`;
  }),
  AGE,
];

/** No Age column: the reference prints none for IPAddress. */
export const IP_ADDRESS: Column[] = [
  docCol('ParentRef', 'string', 'networking.v1.IPAddressSpec', 'parentRef', (x) => {
    const r = map(x.spec).parentRef;
    if (r === undefined || r === null) return '<none>';
    const ref = map(r);
    const gr = s(ref.group) === '' ? s(ref.resource) : `${s(ref.resource)}.${s(ref.group)}`;
    const ns = s(ref.namespace) === '' ? '' : `/${s(ref.namespace)}`;
    return `${gr.toLowerCase()}${ns}/${s(ref.name)}`;
  }),
];

export const SERVICE_CIDR: Column[] = [
  docCol('CIDRs', 'string', 'networking.v1.ServiceCIDRSpec', 'cidrs', (x) => list<string>(map(x.spec).cidrs).join(',')),
  AGE,
];

// ---- discovery and node -----------------------------------------------------------------------

export const ENDPOINT_SLICE: Column[] = [
  docCol('AddressType', 'string', 'discovery.v1.EndpointSlice', 'addressType', (x) => s(top(x).addressType)),
  docCol('Ports', 'string', 'discovery.v1.EndpointSlice', 'ports', (x) =>
    upToThree(list<J>(top(x).ports).map((p) => (typeof p.port === 'number' ? String(p.port) : typeof p.name === 'string' ? p.name : '*'))),
  ),
  docCol('Endpoints', 'string', 'discovery.v1.EndpointSlice', 'endpoints', (x) =>
    upToThree(list<J>(top(x).endpoints).flatMap((e) => list<string>(e.addresses))),
  ),
  AGE,
];

export const RUNTIME_CLASS: Column[] = [
  // The reference describes it with ObjectMeta's (absent) "handler" documentation: empty.
  col('Handler', 'string', '', (x) => s(top(x).handler)),
  AGE,
];

// ---- storage ----------------------------------------------------------------------------------

const DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';

/** IsDefaultAnnotation: either annotation says "true". */
export function isDefaultClass(annotations: Record<string, string> | undefined): boolean {
  return annotations?.[DEFAULT_CLASS] === 'true' || annotations?.[BETA_DEFAULT_CLASS] === 'true';
}

const SC = 'storage.v1.StorageClass';

export const STORAGE_CLASS: Column[] = [
  { ...NAME, cell: (x) => `${x.metadata.name ?? ''}${isDefaultClass(x.metadata.annotations) ? ' (default)' : ''}` },
  docCol('Provisioner', 'string', SC, 'provisioner', (x) => s(top(x).provisioner)),
  docCol('ReclaimPolicy', 'string', SC, 'reclaimPolicy', (x) => s(top(x).reclaimPolicy) || 'Delete'),
  docCol('VolumeBindingMode', 'string', SC, 'volumeBindingMode', (x) => s(top(x).volumeBindingMode) || 'Immediate'),
  docCol('AllowVolumeExpansion', 'string', SC, 'allowVolumeExpansion', (x) => top(x).allowVolumeExpansion === true),
  AGE,
];

const CSI = 'storage.v1.CSIDriverSpec';

export const CSI_DRIVER: Column[] = [
  docCol('AttachRequired', 'boolean', CSI, 'attachRequired', (x) => map(x.spec).attachRequired !== false),
  docCol('PodInfoOnMount', 'boolean', CSI, 'podInfoOnMount', (x) => map(x.spec).podInfoOnMount === true),
  docCol('StorageCapacity', 'boolean', CSI, 'storageCapacity', (x) => map(x.spec).storageCapacity === true),
  docCol('TokenRequests', 'string', CSI, 'tokenRequests', (x) => {
    const t = map(x.spec).tokenRequests;
    return Array.isArray(t) ? t.map((r) => s(map(r).audience)).join(',') : '<unset>';
  }),
  docCol('RequiresRepublish', 'boolean', CSI, 'requiresRepublish', (x) => map(x.spec).requiresRepublish === true),
  docCol('Modes', 'string', CSI, 'volumeLifecycleModes', (x) => {
    const m = list<string>(map(x.spec).volumeLifecycleModes);
    return m.length > 0 ? m.join(',') : '<none>';
  }),
  AGE,
];

export const CSI_NODE: Column[] = [
  col('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node', (x) => list(map(x.spec).drivers).length),
  AGE,
];

/** No Age column: the reference prints none for CSIStorageCapacity. */
export const CSI_STORAGE_CAPACITY: Column[] = [
  docCol('StorageClassName', 'string', 'storage.v1.CSIStorageCapacity', 'storageClassName', (x) => s(top(x).storageClassName)),
  docCol('Capacity', 'string', 'storage.v1.CSIStorageCapacity', 'capacity', (x) => {
    const q = parseQuantity(top(x).capacity);
    return q ? formatQuantity(q) : '<unset>';
  }),
];

/** The reference formats Attacher as a name too, so Name is listed here explicitly. */
export const VOLUME_ATTACHMENT: Column[] = [
  NAME,
  docCol('Attacher', 'string', 'storage.v1.VolumeAttachmentSpec', 'attacher', (x) => s(map(x.spec).attacher), 'name'),
  docCol('PV', 'string', 'storage.v1.VolumeAttachmentSource', 'persistentVolumeName', (x) =>
    s(map(map(x.spec).source).persistentVolumeName),
  ),
  docCol('Node', 'string', 'storage.v1.VolumeAttachmentSpec', 'nodeName', (x) => s(map(x.spec).nodeName)),
  docCol('Attached', 'boolean', 'storage.v1.VolumeAttachmentStatus', 'attached', (x) => map(x.status).attached === true),
  AGE,
];
