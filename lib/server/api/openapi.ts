import { z } from 'zod'
import { type Endpoint, endpoints, pluginEndpoints } from '@/lib/server/api/endpoints'
import { ErrorBody, Health, Readiness } from '@/lib/server/api/schemas'

// ErrorBody is referenced as #/components/schemas/Error.
void ErrorBody

const VERSION = '0.1.0'

function jsonSchema(schema: z.ZodType, io: 'input' | 'output') {
  return z.toJSONSchema(schema, { io, target: 'openapi-3.0', unrepresentable: 'any' })
}

/** Response schemas with a registered id become shared components referenced by $ref. */
function responseSchema(schema: z.ZodType) {
  const id = z.globalRegistry.get(schema)?.id
  return id ? { $ref: `#/components/schemas/${id}` } : jsonSchema(schema, 'output')
}

function componentSchemas() {
  return z.toJSONSchema(z.globalRegistry, {
    io: 'output',
    target: 'openapi-3.0',
    unrepresentable: 'any',
    uri: (id) => `#/components/schemas/${id}`,
  }).schemas
}

function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string)
}

function operationFor(ep: Endpoint) {
  const input = jsonSchema(ep.docBody?.() ?? ep.op.input, 'input') as {
    properties?: Record<string, unknown>
    required?: string[]
  }
  const names = pathParams(ep.path)
  const parameters: unknown[] = names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))
  let requestBody: unknown
  if (ep.source === 'query') {
    for (const [name, schema] of Object.entries(input.properties ?? {})) {
      if (names.includes(name)) continue
      parameters.push({ name, in: 'query', required: input.required?.includes(name) ?? false, schema })
    }
  }
  if (ep.source === 'multipart') {
    requestBody = { required: true, content: { 'multipart/form-data': { schema: input } } }
  } else if (ep.source === 'body' && ep.docBody) {
    requestBody = { required: true, content: { 'application/json': { schema: input } } }
  } else if (ep.source === 'body') {
    const props = Object.fromEntries(Object.entries(input.properties ?? {}).filter(([k]) => !names.includes(k)))
    requestBody = {
      required: true,
      content: {
        'application/json': {
          schema: { ...input, properties: props, required: input.required?.filter((r) => !names.includes(r)) },
        },
      },
    }
  }
  const err = (description: string) => ({
    description,
    content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
  })
  return {
    operationId: ep.op.name,
    summary: ep.summary,
    tags: [ep.tag],
    description: `Requires the scope \`${ep.op.scope}\`.`,
    security: [{ apiKey: [] }, { session: [] }],
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: {
      [String(ep.status ?? 200)]: {
        description: 'Success',
        content: { 'application/json': { schema: responseSchema(ep.output) } },
      },
      '400': err('Invalid input; `fieldErrors` names the fields'),
      '401': err('Not authenticated'),
      '403': err('Authenticated, but the role lacks the scope'),
      '404': err('Not found (or not visible to you)'),
      '413': err('Input too large'),
    },
  }
}

/** The OpenAPI 3 document, generated from the same zod schemas that validate requests. */
export function openApiDocument() {
  const paths: Record<string, Record<string, unknown>> = {
    '/health': {
      get: {
        operationId: 'health',
        summary: 'Liveness and database check (no authentication)',
        tags: ['System'],
        responses: {
          '200': { description: 'Healthy', content: { 'application/json': { schema: responseSchema(Health) } } },
          '503': {
            description: 'Database unreachable',
            content: { 'application/json': { schema: responseSchema(Health) } },
          },
        },
      },
    },
    '/ready': {
      get: {
        operationId: 'ready',
        summary: 'Readiness for a load balancer (no authentication): 503 while the instance shuts down',
        tags: ['System'],
        responses: {
          '200': {
            description: 'Taking traffic',
            content: { 'application/json': { schema: responseSchema(Readiness) } },
          },
          '503': {
            description: 'Draining (SIGTERM) or database unreachable',
            content: { 'application/json': { schema: responseSchema(Readiness) } },
          },
        },
      },
    },
    '/metrics': {
      get: {
        operationId: 'metrics',
        summary: 'Prometheus metrics (Authorization: Bearer $PARLEY_METRICS_TOKEN; 404 when it is not set)',
        tags: ['System'],
        responses: {
          '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } },
          '401': { description: 'Missing or wrong token' },
          '404': { description: 'No PARLEY_METRICS_TOKEN configured' },
        },
      },
    },
  }
  const streamed = (summary: string, scope: string, params: unknown[], content: Record<string, unknown>) => ({
    get: {
      summary,
      tags: ['Runs'],
      description: `Requires the scope \`${scope}\` and write access to the run's study (viewers read, they do not export).`,
      security: [{ apiKey: [] }, { session: [] }],
      parameters: params,
      responses: {
        '200': { description: 'The file, streamed', content },
        '400': {
          description: 'Unknown table or format',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
        '401': { description: 'Not authenticated' },
        '403': { description: 'No export permission' },
        '404': { description: 'Not found (or not visible to you)' },
      },
    },
  })
  const runId = { name: 'runId', in: 'path', required: true, schema: { type: 'string' } }
  paths['/runs/{runId}/export'] = streamed(
    "A run's table: d (sessions), m (messages), c (contexts) or one of its protocol's tables (see GET /runs/{runId} `exports`)",
    'exports:read',
    [
      runId,
      { name: 'table', in: 'query', required: false, schema: { type: 'string', default: 'm' } },
      {
        name: 'format',
        in: 'query',
        required: false,
        schema: { type: 'string', enum: ['jsonl', 'csv'], default: 'jsonl' },
      },
    ],
    {
      'application/x-ndjson': { schema: { type: 'string' } },
      'text/csv': { schema: { type: 'string' } },
    },
  )
  paths['/runs/{runId}/files/{file}'] = streamed(
    "A file its protocol builds for the run (see GET /runs/{runId} `files`), e.g. clembench's results folder as a zip",
    'exports:read',
    [runId, { name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
    { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
  )
  for (const ep of [...(Object.values(endpoints) as Endpoint[]), ...pluginEndpoints()]) {
    paths[ep.path] ??= {}
    ;(paths[ep.path] as Record<string, unknown>)[ep.method.toLowerCase()] = operationFor(ep)
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Parley API',
      version: VERSION,
      description:
        "REST API of Parley. Authenticate with an API key (Settings → API keys) sent as `Authorization: Bearer pk_…`; a key acts with its owner's role.",
    },
    servers: [{ url: '/api/v1' }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: pk_…' },
        session: { type: 'apiKey', in: 'cookie', name: 'better-auth.session_token' },
      },
      schemas: componentSchemas(),
    },
  }
}

export { VERSION }
