import { methods } from '@/lib/server/api/handler'
import { scrape } from '@/lib/server/metrics'

export const dynamic = 'force-dynamic'

/** GET /api/v1/metrics — Prometheus text format; needs `Authorization: Bearer $PARLEY_METRICS_TOKEN` (404 without the setting). */
async function metrics(req: Request) {
  const { status, body, contentType } = await scrape(req.headers.get('authorization'))
  return new Response(body, {
    status,
    headers: {
      'content-type': contentType,
      'cache-control': 'no-store',
      ...(status === 401 ? { 'www-authenticate': 'Bearer realm="Parley metrics"' } : {}),
    },
  })
}

export const { GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS } = methods({ GET: metrics })
