import { redirect } from 'next/navigation'

/**
 * Work items are gone: a person's work is the sessions whose seats they fill, all in the one queue
 * at /work (old links to an item land there; the items themselves are kept in the audit log).
 */
export default function OldWorkItemPage() {
  redirect('/work')
}
