import { redirect } from 'next/navigation'

/** The sessions of a person are part of their one work queue. */
export default function SessionsPage() {
  redirect('/work')
}
