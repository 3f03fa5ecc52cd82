import { type BrowserContext, test as base, expect } from '@playwright/test'

export { expect }

export interface CspViolation {
  page: string
  text: string
}

/**
 * Watches a browser context for Content-Security-Policy violations: the browser's console errors
 * ("…violates the following Content Security Policy directive…") and the `securitypolicyviolation`
 * events of every page, which each page reports through an exposed function.
 */
export async function watchCsp(context: BrowserContext): Promise<CspViolation[]> {
  const violations: CspViolation[] = []
  context.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text()))
      violations.push({ page: msg.page()?.url() ?? '', text: msg.text() })
  })
  await context.exposeFunction('__parleyCspViolation', (page: string, text: string) => violations.push({ page, text }))
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __parleyCspViolation?: (p: string, t: string) => void })
        .__parleyCspViolation
      report?.(
        location.href,
        `${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} (${e.sourceFile}:${e.lineNumber})`,
      )
    })
  })
  return violations
}

/**
 * Every spec uses this `test`: its browser context fails the test on any CSP violation, so the whole
 * suite (RDKit drawings, recharts, dataset images, live updates, the playground stream) runs under the
 * policy. A test that provokes a violation on purpose sets `test.use({ cspViolationsAllowed: true })`.
 * Contexts a test opens itself can be watched with {@link watchCsp}.
 */
export const test = base.extend<{ cspViolationsAllowed: boolean; cspViolations: CspViolation[] }>({
  cspViolationsAllowed: [false, { option: true }],
  cspViolations: [
    async ({ context, cspViolationsAllowed }, use) => {
      const violations = await watchCsp(context)
      await use(violations)
      if (!cspViolationsAllowed) expect(violations, 'Content-Security-Policy violations').toEqual([])
    },
    { auto: true },
  ],
})
