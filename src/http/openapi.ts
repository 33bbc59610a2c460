/**
 * /openapi/v2 and /openapi/v3, built from the schemas and the kinds.
 */
import { pathNotFound } from '../api/status';
import type { ApiRegistry } from '../registry/api-registry';
import type { SchemaSet } from '../schema/engine';

export class OpenApi {
  constructor(
    readonly api: ApiRegistry,
    readonly schemas: SchemaSet,
  ) {}

  handle(_path: string, _req: Request): Response {
    throw pathNotFound();
  }
}
