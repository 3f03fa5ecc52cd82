import ReactMarkdown from 'react-markdown'
import rehypeSanitize from 'rehype-sanitize'
import { cn } from '@/components/ui/cn'

/**
 * Markdown written by people (a study's guidelines) shown as formatted text. react-markdown builds
 * React elements (never innerHTML) and drops raw HTML (`skipHtml`); rehype-sanitize (GitHub's schema)
 * strips anything else unsafe, such as javascript: links. Works in server and client components.
 */
export function Markdown({ children, className }: { children: string; className?: string }) {
  return (
    <div
      className={cn(
        'space-y-2 text-sm leading-relaxed [&_a]:text-brand-700 [&_a]:underline [&_blockquote]:border-l-4 [&_blockquote]:border-stone-200 [&_blockquote]:pl-3 [&_code]:rounded [&_code]:bg-stone-100 [&_code]:px-1 [&_h1]:text-lg [&_h1]:font-semibold [&_h2]:text-base [&_h2]:font-semibold [&_h3]:font-semibold [&_ol]:list-decimal [&_ol]:pl-5 [&_pre]:overflow-x-auto [&_table]:border-collapse [&_td]:border [&_td]:px-2 [&_th]:border [&_th]:px-2 [&_ul]:list-disc [&_ul]:pl-5',
        className,
      )}
      data-testid="markdown"
    >
      <ReactMarkdown skipHtml rehypePlugins={[rehypeSanitize]}>
        {children}
      </ReactMarkdown>
    </div>
  )
}
