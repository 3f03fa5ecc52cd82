#!/bin/sh
echo "the native Prisma schema engine is not installed; use npm run db:migrate" >&2
exit 1
