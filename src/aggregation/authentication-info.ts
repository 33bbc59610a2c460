/**
 * kube-system/extension-apiserver-authentication (the reference's
 * ClusterAuthenticationTrustController): where aggregated API servers (metrics-server, the
 * sample-apiserver, anything built on k8s.io/apiserver) learn whom to trust. Written at start when
 * --requestheader-client-ca-file is given, replaced when it differs from what is stored:
 *
 *   requestheader-client-ca-file        the CA that signs the front proxy's client certificate
 *                                       (--proxy-client-cert-file)
 *   requestheader-allowed-names         its accepted common names (JSON list; empty: any)
 *   requestheader-username-headers      the headers the proxy puts the user in (JSON lists), as
 *   requestheader-uid-headers           proxy.ts sends them
 *   requestheader-group-headers
 *   requestheader-extra-headers-prefix
 */
import type { Obj } from '../api/meta';
import { StatusError } from '../api/status';
import type { ApiRegistry } from '../registry/api-registry';
import type { WriteOptions } from '../registry/options';

export interface RequestHeaderTrust {
  /** PEM of --requestheader-client-ca-file. */
  clientCa: string;
  /** --requestheader-allowed-names. */
  allowedNames: string[];
}

export const AUTHENTICATION_CONFIGMAP = 'extension-apiserver-authentication';

/** The ConfigMap as the reference writes it. */
export function authenticationConfigMap(t: RequestHeaderTrust): Obj {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: AUTHENTICATION_CONFIGMAP, namespace: 'kube-system' },
    data: {
      'requestheader-client-ca-file': t.clientCa,
      'requestheader-allowed-names': JSON.stringify(t.allowedNames),
      'requestheader-username-headers': JSON.stringify(['X-Remote-User']),
      'requestheader-uid-headers': JSON.stringify(['X-Remote-Uid']),
      'requestheader-group-headers': JSON.stringify(['X-Remote-Group']),
      'requestheader-extra-headers-prefix': JSON.stringify(['X-Remote-Extra-']),
    },
  };
}

const write = (): WriteOptions => ({ dryRun: false, fieldValidation: 'Strict', warnings: [] });

/** Writes the ConfigMap (an update changing nothing writes nothing). */
export async function publishAuthenticationInfo(api: ApiRegistry, t: RequestHeaderTrust): Promise<void> {
  const configmaps = api.lookup('', 'v1', 'configmaps');
  if (!configmaps) return;
  const cm = authenticationConfigMap(t);
  try {
    await configmaps.update('kube-system', AUTHENTICATION_CONFIGMAP, structuredClone(cm), write(), '');
  } catch (e) {
    if (!(e instanceof StatusError) || e.code !== 404) throw e;
    await configmaps.create('kube-system', cm, write()).catch((err) => {
      if (!(err instanceof StatusError) || err.code !== 409) throw err;
    });
  }
}
