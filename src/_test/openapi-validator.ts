import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export type OpenApiDocument = {
  openapi: string;
  paths: Record<
    string,
    Record<string, { responses?: Record<string, { content?: Record<string, unknown> }> }>
  >;
};

/**
 * Checks answers against the published OpenAPI document: the JSON schema of the response of
 * `path` and `status` is compiled with Ajv (OpenAPI's `nullable` included) and the body
 * validated. Used by the tests so every answer they see matches what /openapi.json promises.
 */
export function createOpenApiValidator(document: OpenApiDocument) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document as object, "openapi.json");
  const compiled = new Map<string, ValidateFunction>();
  const escapePointer = (segment: string) => segment.replaceAll("~", "~0").replaceAll("/", "~1");

  return {
    /** Throws with Ajv's errors when `value` does not match `components.schemas[name]` of the document. */
    checkComponent(name: string, value: unknown): void {
      const key = `#${name}`;
      let validate = compiled.get(key);
      if (!validate) {
        validate = ajv.compile({ $ref: `openapi.json#/components/schemas/${escapePointer(name)}` });
        compiled.set(key, validate);
      }
      if (!validate(value)) {
        throw new Error(
          `${JSON.stringify(value).slice(0, 500)} does not match ${name} of /openapi.json: ${ajv.errorsText(validate.errors)}`,
        );
      }
    },
    /** Throws with Ajv's errors when `body` is not what the document says `GET path` answers with `status`. */
    check(path: string, status: number, body: unknown): void {
      const responses = document.paths[path]?.get?.responses;
      if (!responses) throw new Error(`${path} is not in the OpenAPI document`);
      const code = String(status) in responses ? String(status) : "default";
      if (!responses[code]?.content?.["application/json"]) {
        throw new Error(`${path} does not document a JSON answer with status ${status}`);
      }
      const key = `${path} ${code}`;
      let validate = compiled.get(key);
      if (!validate) {
        const pointer = `openapi.json#/paths/${escapePointer(path)}/get/responses/${code}/content/application~1json/schema`;
        validate = ajv.compile({ $ref: pointer });
        compiled.set(key, validate);
      }
      if (!validate(body)) {
        throw new Error(
          `answer of ${path} (${status}) does not match /openapi.json: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`,
        );
      }
    },
  };
}
