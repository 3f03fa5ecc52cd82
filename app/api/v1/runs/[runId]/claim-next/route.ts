import { endpoints } from '@/lib/server/api/endpoints'
import { handle, methods } from '@/lib/server/api/handler'

export const dynamic = 'force-dynamic'
export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methods({ POST: handle(endpoints.claimNext) })
