/** The clear word when MINT's Python tool cannot run here: why, and how to install it. */
export function ToolUnavailable({ sandbox }: { sandbox: { reason?: string; installHint?: string } }) {
  return (
    <div role="alert" className="rounded-md border border-red-300 bg-red-50 px-4 py-3 text-sm text-red-900">
      <p className="font-semibold">MINT's Python tool is unavailable here.</p>
      <p className="mt-1">Why: {sandbox.reason ?? 'the sandbox could not start'}.</p>
      {sandbox.installHint ? (
        <p className="mt-1">
          Install it on the server: <code className="rounded bg-white px-1">{sandbox.installHint}</code>
        </p>
      ) : null}
    </div>
  )
}
