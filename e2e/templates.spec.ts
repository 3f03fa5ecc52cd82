import { expect, test } from './fixtures'
import { signIn } from './helpers'

test('a researcher defines a generic task template: a bad regex is refused with the input kept, MATCH can be tried', async ({
  page,
}) => {
  await signIn(page, 'researcher@parley.local')
  await page.goto('/studies/demo-study')
  await page.getByRole('link', { name: 'New template' }).click()
  await expect(page.getByRole('heading', { name: 'New task template' })).toBeVisible()
  const name = `Tumour grade ${Date.now()}`
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name)
  await page.getByLabel('System prompt').fill('You are a pathologist.')
  await page.getByLabel('Question about an instance').fill('Grade this report: {report}')
  await page.getByRole('combobox', { name: /^Mode/ }).selectOption('regex')
  await page.getByLabel('Pattern', { exact: true }).fill('grade (\\d')
  await page.getByRole('button', { name: 'Save template' }).click()
  // Said once, beside the pattern, which takes the focus.
  const pattern = page.getByLabel('Pattern', { exact: true })
  await expect(pattern).toHaveAccessibleDescription(/not a valid regular expression/)
  await expect(pattern).toBeFocused()
  await expect(page.getByText(/not a valid regular expression/)).toHaveCount(1)
  await expect(page.getByLabel('System prompt')).toHaveValue('You are a pathologist.')
  await expect(page.getByLabel('Pattern', { exact: true })).toHaveValue('grade (\\d')

  // A pattern the linear-time engine cannot run is refused with the reason, at try and at save.
  await page.getByLabel('Pattern', { exact: true }).fill('grade (\\d) of \\1')
  await page.getByLabel('First prediction').fill('grade 2 of 2')
  await page.getByLabel('Second prediction').fill('grade 2 of 2')
  await page.getByRole('button', { name: 'Try', exact: true }).click()
  await expect(page.getByTestId('try-result')).toContainText('Backreferences')
  await page.getByRole('button', { name: 'Save template' }).click()
  await expect(pattern).toHaveAccessibleDescription(/Backreferences/)

  // Fix the pattern and try MATCH before saving.
  await page.getByLabel('Pattern', { exact: true }).fill('grade\\s*(\\d)')
  await page.getByLabel('First prediction').fill('Tumour grade 2, well differentiated')
  await page.getByLabel('Second prediction').fill('GRADE 2')
  await page.getByRole('button', { name: 'Try', exact: true }).click()
  await expect(page.getByTestId('try-result')).toContainText('MATCH: these two predictions match.')
  await page.getByLabel('Second prediction').fill('grade 3')
  await page.getByRole('button', { name: 'Try', exact: true }).click()
  await expect(page.getByTestId('try-result')).toContainText('No MATCH')

  await page.getByRole('button', { name: 'Save template' }).click()
  await expect(page.getByRole('heading', { name })).toBeVisible()
  await expect(page.getByText('Grade this report: <report>')).toBeVisible()
  await expect(page.getByText('Prediction: <prediction>')).toBeVisible()
})
