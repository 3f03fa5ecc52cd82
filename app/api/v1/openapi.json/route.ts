import { json } from '@/lib/server/api/handler'
import { openApiDocument } from '@/lib/server/api/openapi'

export const dynamic = 'force-dynamic'
export const GET = () => json(openApiDocument())
