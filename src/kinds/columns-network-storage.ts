/**
 * Table columns of the networking (Ingress, IngressClass, IPAddress, ServiceCIDR), discovery
 * (EndpointSlice), node (RuntimeClass) and storage kinds, as the reference's printers print them
 * (pkg/printers/internalversion). The server prints tables wide: nothing is clipped.
 */
import { formatQuantity, parseQuantity } from '../api/quantity';
import type { Column } from '../codec/table';
import { AGE, col, NAME_DESCRIPTION } from './columns';
import { type J, list, map } from './validation/common';

const s = (v: unknown): string => (typeof v === 'string' ? v : '');

/** listWithMoreString: up to three items, then "+ N more...", "<unset>" when none. */
function upToThree(items: string[]): string {
  if (items.length > 3) return `${items.slice(0, 3).join(',')} + ${items.length - 3} more...`;
  return items.length === 0 ? '<unset>' : items.join(',');
}

// ---- networking -------------------------------------------------------------------------------

/** formatHosts: the rules' hosts ("*" for none), up to three. */
function ingressHosts(rules: J[]): string {
  const hosts = rules.map((r) => s(r.host) || '*');
  if (hosts.length === 0) return '*';
  if (hosts.length > 3) return `${hosts.slice(0, 3).join(',')} + ${hosts.length - 3} more...`;
  return hosts.join(',');
}

/** ingressLoadBalancerStatusStringer (wide): the IPs or hostnames of the load balancer. */
function ingressAddress(status: J): string {
  return list<J>(map(status.loadBalancer).ingress)
    .map((i) => s(i.ip) || s(i.hostname))
    .filter((x) => x !== '')
    .join(',');
}

export const INGRESS: Column[] = [
  col('Class', 'string', 'The name of the IngressClass resource this Ingress uses.', (x) => s(map(x.spec).ingressClassName) || '<none>'),
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

export const IP_ADDRESS: Column[] = [
  col('ParentRef', 'string', 'The IP address reference is bound to', (x) => {
    const r = map(x.spec).parentRef;
    if (r === undefined || r === null) return '<none>';
    const ref = map(r);
    const gr = s(ref.group) === '' ? s(ref.resource) : `${s(ref.resource)}.${s(ref.group)}`;
    const ns = s(ref.namespace) === '' ? '' : `/${s(ref.namespace)}`;
    return `${gr.toLowerCase()}${ns}/${s(ref.name)}`;
  }),
];

export const SERVICE_CIDR: Column[] = [
  col('CIDRs', 'string', 'CIDRs defines the IP blocks in CIDR notation', (x) => list<string>(map(x.spec).cidrs).join(',')),
  AGE,
];

// ---- discovery and node -----------------------------------------------------------------------

export const ENDPOINT_SLICE: Column[] = [
  col('AddressType', 'string', 'The IP protocol for this slice', (x) => s((x as unknown as J).addressType)),
  col('Ports', 'string', 'Ports provided by this slice', (x) =>
    upToThree(
      list<J>((x as unknown as J).ports).map((p) =>
        typeof p.port === 'number' ? String(p.port) : typeof p.name === 'string' ? p.name : '*',
      ),
    ),
  ),
  col('Endpoints', 'string', 'Endpoints in this slice', (x) =>
    upToThree(list<J>((x as unknown as J).endpoints).flatMap((e) => list<string>(e.addresses))),
  ),
  AGE,
];

export const RUNTIME_CLASS: Column[] = [
  col(
    'Handler',
    'string',
    'Handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class.',
    (x) => s((x as unknown as J).handler),
  ),
  AGE,
];

// ---- storage ----------------------------------------------------------------------------------

const DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
const BETA_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';

/** IsDefaultAnnotation: either annotation says "true". */
export function isDefaultClass(annotations: Record<string, string> | undefined): boolean {
  return annotations?.[DEFAULT_CLASS] === 'true' || annotations?.[BETA_DEFAULT_CLASS] === 'true';
}

export const STORAGE_CLASS: Column[] = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description: NAME_DESCRIPTION,
    priority: 0,
    cell: (x) => `${x.metadata.name ?? ''}${isDefaultClass(x.metadata.annotations) ? ' (default)' : ''}`,
  },
  col('Provisioner', 'string', 'Indicates the type of the provisioner.', (x) => s((x as unknown as J).provisioner)),
  col('ReclaimPolicy', 'string', 'Indicates the type of the reclaim policy.', (x) => s((x as unknown as J).reclaimPolicy) || 'Delete'),
  col(
    'VolumeBindingMode',
    'string',
    'indicates how PersistentVolumeClaims should be provisioned and bound',
    (x) => s((x as unknown as J).volumeBindingMode) || 'Immediate',
  ),
  col(
    'AllowVolumeExpansion',
    'string',
    'Indicates whether the storage class allow volume expand',
    (x) => (x as unknown as J).allowVolumeExpansion === true,
  ),
  AGE,
];

export const CSI_DRIVER: Column[] = [
  col(
    'AttachRequired',
    'boolean',
    'attachRequired indicates this CSI volume driver requires an attach operation',
    (x) => map(x.spec).attachRequired !== false,
  ),
  col(
    'PodInfoOnMount',
    'boolean',
    'podInfoOnMount indicates this CSI volume driver requires additional pod information',
    (x) => map(x.spec).podInfoOnMount === true,
  ),
  col(
    'StorageCapacity',
    'boolean',
    'storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity',
    (x) => map(x.spec).storageCapacity === true,
  ),
  col('TokenRequests', 'string', "tokenRequests indicates the CSI driver needs pods' service account tokens", (x) => {
    const t = map(x.spec).tokenRequests;
    return Array.isArray(t) ? t.map((r) => s(map(r).audience)).join(',') : '<unset>';
  }),
  col(
    'RequiresRepublish',
    'boolean',
    'requiresRepublish indicates the CSI driver wants NodePublishVolume periodically called',
    (x) => map(x.spec).requiresRepublish === true,
  ),
  col('Modes', 'string', 'volumeLifecycleModes defines what kind of volumes this CSI volume driver supports', (x) => {
    const m = list<string>(map(x.spec).volumeLifecycleModes);
    return m.length > 0 ? m.join(',') : '<none>';
  }),
  AGE,
];

export const CSI_NODE: Column[] = [
  col('Drivers', 'integer', 'Drivers indicates the number of CSI drivers registered on the node', (x) => list(map(x.spec).drivers).length),
  AGE,
];

export const CSI_STORAGE_CAPACITY: Column[] = [
  col('StorageClassName', 'string', 'The name of the StorageClass that the reported capacity applies to', (x) =>
    s((x as unknown as J).storageClassName),
  ),
  col('Capacity', 'string', 'Capacity is the value reported by the CSI driver in its GetCapacityResponse', (x) => {
    const q = parseQuantity((x as unknown as J).capacity);
    return q ? formatQuantity(q) : '<unset>';
  }),
  AGE,
];

export const VOLUME_ATTACHMENT: Column[] = [
  col('Attacher', 'string', 'Attacher indicates the name of the volume driver that MUST handle this request.', (x) =>
    s(map(x.spec).attacher),
  ),
  col('PV', 'string', 'Name of the persistent volume to attach.', (x) => s(map(map(x.spec).source).persistentVolumeName)),
  col('Node', 'string', 'The node that the volume should be attached to.', (x) => s(map(x.spec).nodeName)),
  col('Attached', 'boolean', 'Indicates the volume is successfully attached.', (x) => map(x.status).attached === true),
  AGE,
];
