import { randomUUID } from 'node:crypto'
import { expect, test } from './fixtures'
import { signIn, sql } from './helpers'

/** A DRUG session awaiting the demo expert, after the machine's first message. */
async function awaitingSession() {
  const [expert] = await sql<{ id: string }>(`SELECT id FROM "user" WHERE email = 'expert@parley.local'`)
  const sessionId = `e2e-${randomUUID()}`
  await sql(
    `INSERT INTO "ProtocolSession" (id, "studyId", protocol, "protocolVersion", config, task, instance, seats, status, "awaitingSeat", "updatedAt")
     VALUES ($1, 'demo-study', 'pxp', '1', '{"n":10,"k":3}', 'drug', $2, $3, 'awaiting', 'h', now())`,
    [
      sessionId,
      JSON.stringify({ input: { smiles: 'CCOC(C)=O' }, prediction: 'CCO.CC(=O)O', explanation: 'ester' }),
      JSON.stringify({
        m: { kind: 'llm', model: { connectionId: 'none' }, helpers: { checker: { connectionId: 'none' } } },
        h: { kind: 'human', userId: expert?.id, claimable: false },
      }),
    ],
  )
  await sql(`INSERT INTO "SessionSeat" ("sessionId", seat, "userId") VALUES ($1, 'h', $2)`, [sessionId, expert?.id])
  const first = { seq: 1, sender: 'm', tag: 'INIT', prediction: 'CCO', explanation: 'A reduction of the ester.' }
  await sql(
    `INSERT INTO "ProtocolMessage" (id, "sessionId", seq, sender, receiver, label, value, detail, body)
     VALUES ($1, $2, 1, 'm', 'h', 'INIT', 'CCO', 'A reduction of the ester.', $3)`,
    [randomUUID(), sessionId, JSON.stringify(first)],
  )
  return sessionId
}

test('the expert page is keyboard-first, keeps drafts, and shows the molecule and the guidelines', async ({ page }) => {
  const sessionId = await awaitingSession()
  await signIn(page, 'expert@parley.local')
  await page.goto(`/sessions/${sessionId}`)
  const product = page.getByRole('img', { name: 'Product: CCOC(C)=O' })
  await expect(product).toBeVisible()
  // The drawing is an image from /api/v1/pxp/molecules (not inlined): it loaded, under the page's CSP.
  await expect
    .poll(() => product.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth))
    .toBeGreaterThan(0)

  const match = page.getByRole('group', { name: 'Does the prediction match yours?' })
  const agree = page.getByRole('group', { name: 'Does the explanation agree with yours?' })
  // Single keys outside fields answer the two questions.
  await page.locator('body').click()
  await page.keyboard.press('n')
  await page.keyboard.press('a')
  await expect(match.getByLabel('No')).toBeChecked()
  await expect(agree.getByLabel('Yes')).toBeChecked()
  // …but never while typing: "y" and "d" go into the text.
  await page.getByLabel('Your explanation').fill('')
  await page.getByLabel('Your explanation').pressSequentially('yd esterification')
  await expect(page.getByLabel('Your explanation')).toHaveValue('yd esterification')
  await expect(match.getByLabel('No')).toBeChecked()
  await expect(agree.getByLabel('Yes')).toBeChecked()
  await page.getByLabel('Your prediction').fill('CCO.CC(=O)O')
  await expect(page.getByTestId('draft-status')).toHaveText('Draft saved')

  // The draft survives a reload.
  await page.reload()
  await expect(page.getByTestId('draft-status')).toHaveText('Draft restored')
  await expect(page.getByLabel('Your explanation')).toHaveValue('yd esterification')
  await expect(page.getByLabel('Your prediction')).toHaveValue('CCO.CC(=O)O')
  await expect(match.getByLabel('No')).toBeChecked()

  // ? opens the shortcut help; Escape closes it. g opens the study guidelines.
  await page.locator('body').click()
  await page.keyboard.press('?')
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeVisible()
  await page.keyboard.press('Escape')
  await expect(page.getByRole('dialog', { name: 'Keyboard shortcuts' })).toBeHidden()
  await page.keyboard.press('g')
  await expect(page.getByRole('dialog', { name: 'Study guidelines' })).toBeVisible()
  await page.keyboard.press('Escape')

  // t cycles the tag; the derived one is REFUTE here (no match, agreement, answer unchanged at j = 2).
  await expect(page.getByTestId('derived-tag')).toContainText('Tag: REFUTE')
  await page.keyboard.press('t')
  await expect(page.getByRole('combobox', { name: 'Send as' })).not.toHaveValue('REFUTE')
})
