import { json, methods } from '@/lib/server/api/handler'
import { openApiDocument } from '@/lib/server/api/openapi'

export const dynamic = 'force-dynamic'
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methods({
  GET: async () => json(await openApiDocument()),
})
