/**
 * The reference fixtures of the kinds this server serves (../shared/reference/fixtures), and how
 * to make one creatable: server-owned metadata dropped, a valid name, the test namespace.
 */
import * as path from 'node:path';
import { REFERENCE } from './needs';

export const FIXTURES = path.join(REFERENCE, 'fixtures');

/** Fixture file name (without extension) → collection path. */
export const FIXTURE_KINDS: Record<string, string> = {
  'core.v1.ConfigMap': '/api/v1/namespaces/default/configmaps',
  'core.v1.Secret': '/api/v1/namespaces/default/secrets',
  'core.v1.ServiceAccount': '/api/v1/namespaces/default/serviceaccounts',
  'core.v1.Event': '/api/v1/namespaces/default/events',
  'core.v1.LimitRange': '/api/v1/namespaces/default/limitranges',
  'core.v1.ResourceQuota': '/api/v1/namespaces/default/resourcequotas',
  'core.v1.Service': '/api/v1/namespaces/default/services',
  'core.v1.Pod': '/api/v1/namespaces/default/pods',
  'core.v1.PodTemplate': '/api/v1/namespaces/default/podtemplates',
  'core.v1.Node': '/api/v1/nodes',
  'core.v1.Namespace': '/api/v1/namespaces',
  'apps.v1.Deployment': '/apis/apps/v1/namespaces/default/deployments',
  'policy.v1.PodDisruptionBudget': '/apis/policy/v1/namespaces/default/poddisruptionbudgets',
};

export const isNamespacedCollection = (collection: string): boolean => collection.includes('/namespaces/default/');

// biome-ignore lint/suspicious/noExplicitAny: fixtures are free-form JSON
type Json = Record<string, any>;

/** Server-owned metadata is not sent; the name is made valid (in place; returns `o`). */
export function sanitizeFixture(o: Json, name: string, namespaced: boolean): Json {
  const m = o.metadata;
  for (const k of [
    'uid',
    'resourceVersion',
    'generation',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
    'managedFields',
    'selfLink',
    'generateName',
    'ownerReferences',
    'finalizers',
  ])
    delete m[k];
  m.name = name;
  if (namespaced) m.namespace = 'default';
  else delete m.namespace;
  return o;
}
