/**
 * Whole documents: the Swagger 2.0 document of every served kind and the OpenAPI 3.0 document of
 * one group/version, each with its paths and the definitions they reach.
 */
import type { KindDef } from '../../registry/kind';
import type { Descriptions } from '../../schema/descriptions';
import type { SchemaSet } from '../../schema/engine';
import type { DefName } from '../../schema/types';
import { VERSION_INFO } from '../discovery';
import { kindPaths, renderPaths, resourcesPath } from './paths';
import { API_RESOURCE_LIST, DELETE_OPTIONS, definitions, type Json, listSchema, PATCH, reachable, STATUS } from './schema';

const BEARER = { type: 'apiKey', name: 'authorization', in: 'header', description: 'Bearer Token authentication' };
const INFO = { title: 'svc-apiserver', version: VERSION_INFO.gitVersion.replace(/\+.*$/, '') };

/** Roots of a document's definitions: what its operations name. */
function roots(kinds: KindDef[]): DefName[] {
  return [...kinds.flatMap((k) => (k.virtual ? [k.schema] : [k.schema, listSchema(k)])), STATUS, DELETE_OPTIONS, PATCH, API_RESOURCE_LIST];
}

/** The Swagger 2.0 document of all served kinds, documented from `docs`. */
export function buildV2(schemas: SchemaSet, kinds: KindDef[], docs: Descriptions = {}): Json {
  const paths: Json = {};
  const gvs = new Set<string>();
  for (const k of kinds) {
    const gv = `${k.group}/${k.version}`;
    if (!gvs.has(gv)) {
      gvs.add(gv);
      Object.assign(paths, resourcesPath(k.group, k.version, 'v2'));
    }
    Object.assign(paths, renderPaths(kindPaths(k), 'v2'));
  }
  return {
    swagger: '2.0',
    info: INFO,
    paths,
    definitions: definitions(schemas, reachable(schemas, roots(kinds)), kinds, 'v2', docs),
    securityDefinitions: { BearerToken: BEARER },
    security: [{ BearerToken: [] }],
  };
}

/** The OpenAPI 3.0 document of one group/version (`kinds` all of that group/version), documented from `docs`. */
export function buildV3(schemas: SchemaSet, group: string, version: string, kinds: KindDef[], docs: Descriptions = {}): Json {
  const paths: Json = resourcesPath(group, version, 'v3');
  for (const k of kinds) Object.assign(paths, renderPaths(kindPaths(k), 'v3'));
  return {
    openapi: '3.0.0',
    info: INFO,
    paths,
    components: {
      schemas: definitions(schemas, reachable(schemas, roots(kinds)), kinds, 'v3', docs),
      securitySchemes: { BearerToken: BEARER },
    },
    security: [{ BearerToken: [] }],
  };
}
