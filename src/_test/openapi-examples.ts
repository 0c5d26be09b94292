import type { OpenApiDocument } from "./openapi-validator.js";

/** A parameter of an operation, as /openapi.json gives it. */
export type DocumentedParameter = {
  name: string;
  in: string;
  required?: boolean;
  example?: unknown;
  schema?: { type?: string; format?: string; [key: string]: unknown };
};

/** The media-type object of a JSON answer: its schema and its example(s). */
export type DocumentedMedia = {
  schema?: unknown;
  example?: unknown;
  examples?: Record<string, { summary?: string; value: unknown }>;
};

export type DocumentedOperation = {
  method: string;
  path: string;
  operationId?: string;
  security?: Record<string, unknown>[];
  parameters: DocumentedParameter[];
  responses: Record<string, { content?: Record<string, DocumentedMedia> }>;
};

/** Every operation of the document, with its method and path. */
export function operationsOf(document: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => {
      const o = operation as Partial<DocumentedOperation>;
      return {
        ...o,
        method: method.toUpperCase(),
        path,
        parameters: o.parameters ?? [],
        responses: o.responses ?? {},
      } as DocumentedOperation;
    }),
  );
}

/** The example values of a media object (`example`, or each of `examples`). */
export function examplesOf(media: DocumentedMedia | undefined): unknown[] {
  if (!media) return [];
  if (media.examples) return Object.values(media.examples).map((e) => e.value);
  return "example" in media ? [media.example] : [];
}

/**
 * The query of "Try it out" with the document's own examples: every parameter that has one. The
 * `from`/`to` of a range have none (the histories move with the clock): `range` gives them. Returns the names of required parameters left
 * without a value, for the caller to fail on.
 */
export function exampleQuery(
  operation: DocumentedOperation,
  range: { from: Date; to: Date },
): { query: Record<string, string>; missing: string[] } {
  const query: Record<string, string> = {};
  const missing: string[] = [];
  for (const parameter of operation.parameters) {
    if (parameter.in !== "query") continue;
    if (parameter.example !== undefined) query[parameter.name] = String(parameter.example);
    else if (parameter.name === "from" || parameter.name === "to") {
      query[parameter.name] = (parameter.name === "from" ? range.from : range.to).toISOString();
    } else if (parameter.required) missing.push(parameter.name);
  }
  return { query, missing };
}
