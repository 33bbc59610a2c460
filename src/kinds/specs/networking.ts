/** networking.svc.io/v1 kinds. */
import { INGRESS, INGRESS_CLASS, IP_ADDRESS, SERVICE_CIDR } from '../columns-network-storage';
import { ingress, ingressClass } from '../validation/ingress';
import { ipAddress, serviceCIDR } from '../validation/networking';
import type { Spec } from './spec';

const group = 'networking.svc.io';

export const NETWORKING: Spec[] = [
  { group, kind: 'NetworkPolicy', plural: 'networkpolicies', shortNames: ['netpol'], namespaced: true, pkg: 'networking' },
  {
    group,
    kind: 'Ingress',
    plural: 'ingresses',
    shortNames: ['ing'],
    namespaced: true,
    status: true,
    pkg: 'networking',
    rules: ingress,
    columns: INGRESS,
  },
  {
    group,
    kind: 'IngressClass',
    plural: 'ingressclasses',
    namespaced: false,
    pkg: 'networking',
    rules: ingressClass,
    columns: INGRESS_CLASS,
  },
  {
    group,
    kind: 'IPAddress',
    plural: 'ipaddresses',
    shortNames: ['ip'],
    namespaced: false,
    generation: false,
    pkg: 'networking',
    // The name is an IP address (checked by the rules); IPv6 ones are no DNS subdomains.
    nameRule: 'path-segment',
    rules: ipAddress,
    columns: IP_ADDRESS,
  },
  {
    group,
    kind: 'ServiceCIDR',
    plural: 'servicecidrs',
    namespaced: false,
    generation: false,
    status: true,
    pkg: 'networking',
    rules: serviceCIDR,
    columns: SERVICE_CIDR,
  },
];
