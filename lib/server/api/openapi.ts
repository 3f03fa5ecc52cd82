import { z } from 'zod'
import { type DocPlugins, docPlugins, type Endpoint, endpoints, pluginEndpoints } from '@/lib/server/api/endpoints'
import { IDEMPOTENCY_HOURS } from '@/lib/server/api/idempotency'
import { ErrorBody, Health, Readiness } from '@/lib/server/api/schemas'
import { MAX_INPUT_BYTES } from '@/lib/server/operation'

const VERSION = '0.1.0'

type Json = Record<string, unknown>
const COMPONENT = '#/components/schemas/'

/**
 * A zod schema as an OpenAPI 3.1 Schema Object (JSON Schema 2020-12): nested schemas that have an
 * id become `$ref`s to the document's components, a nullable scalar is `type: [T, 'null']` (with
 * `null` in its enum), and the generator's `$schema`, `$id` and `$defs` are left out.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const out = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Json
  return tidy(out) as Json
}

function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy)
  if (!node || typeof node !== 'object') return node
  const out: Json = {}
  for (const [k, v] of Object.entries(node as Json)) {
    if (k === '$schema' || k === '$id' || k === '$defs') continue
    if (k === '$ref' && typeof v === 'string') {
      out.$ref = v.replace(/^#\/\$defs\//, COMPONENT)
      continue
    }
    out[k] = tidy(v)
  }
  return nullableType(out)
}

/** `anyOf: [{type: T, …}, {type: 'null'}]` → `{type: [T, 'null'], …}`; refs and unions keep their anyOf. */
function nullableType(s: Json): Json {
  const any = s.anyOf as Json[] | undefined
  if (any?.length !== 2) return s
  const i = any.findIndex((b) => b.type === 'null' && Object.keys(b).length === 1)
  const other = any[1 - i]
  if (i < 0 || !other || typeof other.type !== 'string') return s
  const { anyOf: _, ...rest } = s
  return {
    ...other,
    ...rest,
    type: [other.type, 'null'],
    ...(Array.isArray(other.enum) ? { enum: [...other.enum, null] } : {}),
  }
}

/** Every schema registered with an id (lib/server/api/schemas.ts), as components. */
function registeredSchemas(): Record<string, Json> {
  const { schemas } = z.toJSONSchema(z.globalRegistry, {
    io: 'output',
    target: 'draft-2020-12',
    unrepresentable: 'any',
    uri: (id) => `${COMPONENT}${id}`,
  })
  return Object.fromEntries(Object.entries(schemas).map(([id, s]) => [id, tidy(s) as Json]))
}

/** A response schema: a `$ref` to its component when it has an id, else inline. */
function responseSchema(schema: z.ZodType): Json {
  const id = z.globalRegistry.get(schema)?.id
  return id ? { $ref: `${COMPONENT}${id}` } : jsonSchema(schema, 'output')
}

const errorContent = { 'application/json': { schema: { $ref: `${COMPONENT}Error` } } }
const err = (description: string, headers?: Json) => ({
  description,
  content: errorContent,
  ...(headers ? { headers } : {}),
})
const header = (description: string) => ({ description, required: true, schema: { type: 'string' } })

/** The error answers operations share (referenced from each operation that can send them). */
const RESPONSES = {
  BadRequest: err(
    'The input was refused (`fieldErrors` names the fields), or the path or query is not valid UTF-8 or contains U+0000',
  ),
  Unauthorized: err(
    'No credentials, or an API key that is malformed, unknown, revoked or expired, or whose owner is disabled',
    {
      'WWW-Authenticate': header(
        'How to authenticate: `Bearer realm="Parley"`, with `error="invalid_token"` when a key was sent',
      ),
    },
  ),
  Forbidden: err(
    'Authenticated, but the role or the study role lacks the permission; or a change sent with the session cookie from another origin',
  ),
  PayloadTooLarge: err(`The input is over ${MAX_INPUT_BYTES / 1024} KiB (uploads: over PARLEY_MAX_UPLOAD_MB)`),
  UnsupportedMediaType: err(
    'A change sent with the session cookie must be `Content-Type: application/json`; an upload must be multipart/form-data',
  ),
  IdempotencyMismatch: err(
    `This Idempotency-Key was used in the last ${IDEMPOTENCY_HOURS} hours for another request (another path or body)`,
  ),
  ServerError: err('Something went wrong on the server; nothing was saved'),
  Busy: err('The database had no room in time; nothing was saved, try again shortly', {
    'Retry-After': header('Seconds to wait before retrying'),
  }),
}
const ref = (name: keyof typeof RESPONSES) => ({ $ref: `#/components/responses/${name}` })

function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string)
}

/** The statuses an endpoint answers besides success: `handle()`'s and those the endpoint declares. */
function errorResponses(ep: Endpoint): Record<string, unknown> {
  const hasBody = ep.source === 'body' || ep.source === 'multipart'
  return {
    // Every path: proxy.ts refuses a path or query that is not valid UTF-8 or holds U+0000.
    '400': ref('BadRequest'),
    '401': ref('Unauthorized'),
    '403': ref('Forbidden'),
    ...(ep.errors?.[404] ? { '404': err(ep.errors[404]) } : {}),
    ...(ep.errors?.[409] || ep.idempotent
      ? {
          '409': err(
            [ep.errors?.[409], ep.idempotent && 'a request with the same Idempotency-Key is still in progress']
              .filter(Boolean)
              .join('; or '),
            ep.idempotent && !ep.errors?.[409]
              ? { 'Retry-After': header('Seconds to wait before retrying') }
              : undefined,
          ),
        }
      : {}),
    ...(hasBody ? { '413': ref('PayloadTooLarge') } : {}),
    ...(ep.method === 'POST' ? { '415': ref('UnsupportedMediaType') } : {}),
    ...(ep.errors?.[422] ? { '422': err(ep.errors[422]) } : ep.idempotent ? { '422': ref('IdempotencyMismatch') } : {}),
    '500': ref('ServerError'),
    '503': ref('Busy'),
  }
}

function operationFor(ep: Endpoint, plugins: DocPlugins) {
  const input = jsonSchema(ep.docBody?.(plugins) ?? ep.op.input, 'input') as {
    properties?: Record<string, unknown>
    required?: string[]
  }
  const names = pathParams(ep.path)
  const parameters: unknown[] = names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }))
  if (ep.idempotent) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' })
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
  const replayed = ep.idempotent
    ? {
        headers: {
          'Idempotent-Replayed': {
            description: '`true` when this is the stored answer to an earlier request with the same Idempotency-Key',
            schema: { type: 'string', enum: ['true'] },
          },
        },
      }
    : {}
  return {
    operationId: ep.operationId ?? ep.op.name,
    summary: ep.summary,
    tags: [ep.tag],
    description: `Requires the scope \`${ep.op.scope}\`.${
      ep.idempotent
        ? ` Send an \`Idempotency-Key\` to retry safely: the same key and request within ${IDEMPOTENCY_HOURS} hours answer the first answer again (\`Idempotent-Replayed: true\`) instead of creating twice.`
        : ''
    }`,
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses: {
      [String(ep.status ?? 200)]: {
        description: 'Success',
        ...replayed,
        content: ep.answer
          ? { [ep.answer.contentType]: { schema: { type: 'string', contentMediaType: ep.answer.contentType } } }
          : { 'application/json': { schema: responseSchema(ep.output) } },
      },
      ...errorResponses(ep),
    },
  }
}

/** Only the components some operation reaches, so a schema registered elsewhere stays out. */
function reachable(paths: unknown, all: Record<string, Json>): Record<string, Json> {
  const out: Record<string, Json> = {}
  const visit = (node: unknown) => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (!node || typeof node !== 'object') return
    for (const [k, v] of Object.entries(node as Json)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(COMPONENT)) {
        const id = v.slice(COMPONENT.length)
        const schema = all[id]
        if (!schema) throw new Error(`The OpenAPI document refers to an unknown schema ${id}.`)
        if (!out[id]) {
          out[id] = schema
          visit(schema)
        }
      } else visit(v)
    }
  }
  visit(paths)
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
}

/** The OpenAPI 3.1 document, generated from the same zod schemas that validate requests and responses. */
export async function openApiDocument() {
  const plugins = await docPlugins()
  const system = (operationId: string, summary: string, responses: Json) => ({
    get: { operationId, summary, tags: ['System'], security: [], responses },
  })
  const badPath = err('The path or query is not valid UTF-8 or contains U+0000')
  const paths: Record<string, Record<string, unknown>> = {
    '/health': system('health', 'Liveness and database check (no authentication)', {
      '200': { description: 'Healthy', content: { 'application/json': { schema: responseSchema(Health) } } },
      '400': badPath,
      '503': {
        description: 'Database unreachable',
        content: { 'application/json': { schema: responseSchema(Health) } },
      },
    }),
    '/ready': system('ready', 'Readiness for a load balancer (no authentication): 503 while the instance shuts down', {
      '200': { description: 'Taking traffic', content: { 'application/json': { schema: responseSchema(Readiness) } } },
      '400': badPath,
      '503': {
        description: 'Draining (SIGTERM) or database unreachable',
        content: { 'application/json': { schema: responseSchema(Readiness) } },
      },
    }),
  }
  const text = (description: string, headers?: Json) => ({
    description,
    ...(headers ? { headers } : {}),
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  paths['/metrics'] = {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus metrics (Authorization: Bearer $PARLEY_METRICS_TOKEN; 404 when it is not set)',
      tags: ['System'],
      security: [{ metricsToken: [] }],
      responses: {
        '200': text('Prometheus text format'),
        '400': badPath,
        '401': text('Missing or wrong token', { 'WWW-Authenticate': header('`Bearer realm="Parley metrics"`') }),
        '404': text('No PARLEY_METRICS_TOKEN configured'),
      },
    },
  }
  const streamed = (
    operationId: string,
    summary: string,
    scope: string,
    params: unknown[],
    content: Record<string, unknown>,
    invalid: string,
  ) => ({
    get: {
      operationId,
      summary,
      tags: ['Runs'],
      description: `Requires the scope \`${scope}\` and write access to the run's study (viewers read, they do not export).`,
      parameters: params,
      responses: {
        '200': { description: 'The file, streamed', content },
        '400': err(invalid),
        '401': ref('Unauthorized'),
        '403': ref('Forbidden'),
        '404': err('No such run, or not visible to you'),
        '500': ref('ServerError'),
        '503': ref('Busy'),
      },
    },
  })
  const runId = { name: 'runId', in: 'path', required: true, schema: { type: 'string' } }
  paths['/runs/{runId}/export'] = streamed(
    'runs.export',
    "A run's table: d (sessions), m (messages), c (contexts) or one of its protocol's tables (see GET /runs/{runId} `exports`); a protocol table may take its own parameters as further query values (e.g. lambda=0.06), a bad one is a 400 naming it",
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
    'Unknown table or format, or a bad table parameter',
  )
  paths['/runs/{runId}/files/{file}'] = streamed(
    'runs.file',
    "A file its protocol builds for the run (see GET /runs/{runId} `files`), e.g. clembench's results folder as a zip",
    'exports:read',
    [runId, { name: 'file', in: 'path', required: true, schema: { type: 'string' } }],
    { 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } } },
    'The run has no such file',
  )
  for (const ep of [...(Object.values(endpoints) as Endpoint[]), ...(await pluginEndpoints())]) {
    paths[ep.path] ??= {}
    ;(paths[ep.path] as Record<string, unknown>)[ep.method.toLowerCase()] = operationFor(ep, plugins)
  }
  // ErrorBody is registered (id Error): the shared responses refer to it.
  void ErrorBody
  const all = registeredSchemas()
  return {
    openapi: '3.1.0',
    info: {
      title: 'Parley API',
      version: VERSION,
      license: { name: 'MIT', identifier: 'MIT' },
      description: [
        "REST API of Parley. Authenticate with an API key (Settings → API keys) sent as `Authorization: Bearer pk_…`; a key acts with its owner's role. From the browser, the session cookie works too.",
        'Errors are JSON `{ "error": "…", "fieldErrors": { … } }`. A method a path does not list answers 405 with an `Allow` header.',
        `Creating (POST /studies, /runs, /datasets and a protocol's imports) accepts an \`Idempotency-Key\` header: the same key with the same request within ${IDEMPOTENCY_HOURS} hours answers the first answer again instead of creating twice; the same key with another request answers 422, and while the first is still running 409.`,
      ].join('\n\n'),
    },
    servers: [{ url: '/api/v1' }],
    security: [{ apiKey: [] }, { session: [] }],
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: pk_…' },
        session: { type: 'apiKey', in: 'cookie', name: 'better-auth.session_token' },
        metricsToken: { type: 'http', scheme: 'bearer', description: 'PARLEY_METRICS_TOKEN' },
      },
      parameters: {
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: `A key you choose for this create (1–255 visible ASCII characters, e.g. a UUID; a quoted string as in draft-ietf-httpapi-idempotency-key-header works too). Kept ${IDEMPOTENCY_HOURS} hours per account.`,
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      },
      responses: RESPONSES,
      schemas: reachable({ paths, RESPONSES }, all),
    },
  }
}

export { VERSION }
