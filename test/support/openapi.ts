import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';

/** What tests read of the OpenAPI document (api/openapi.ts). */
export interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId: string; responses: Record<string, any>; parameters: any[] }>>;
  components: { schemas: Record<string, any>; responses: Record<string, any>; headers: Record<string, any>; securitySchemes: Record<string, any> };
  [field: string]: any;
}

/** Follows a `$ref` into the document's components (one level: the document has no chains). */
export function resolveRef<T>(doc: OpenApiDocument, value: T | { $ref: string }): T {
  if (typeof value !== 'object' || value === null || !('$ref' in value)) return value;
  const [, , kind, name] = value.$ref.split('/');
  return (doc.components as Record<string, Record<string, T>>)[kind!]![name!]!;
}

/**
 * Validators of bodies against the document's schemas, with their `$ref`s between components
 * resolved (Ajv reads the document's components as one schema resource).
 */
export function openApiValidators(doc: OpenApiDocument) {
  const ajv = new Ajv2020({ strict: false });
  ajv.addSchema({ components: doc.components }, 'openapi');
  const compile = (schema: { $ref?: string }): ValidateFunction => ajv.compile(schema.$ref ? { $ref: `openapi${schema.$ref}` } : schema);
  return {
    compile,
    /** The body schema of GET `path`'s `status` response. */
    response(path: string, status: number | string): ValidateFunction {
      const response = resolveRef(doc, doc.paths[path]?.get?.responses[status]);
      if (!response?.content) throw new Error(`the document has no body for GET ${path} ${status}`);
      return compile(response.content['application/json'].schema);
    },
  };
}
