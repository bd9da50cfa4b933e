// @ts-check
/**
 * The docs site's two adjustments to typedoc's default theme (loaded by typedoc.json's
 * `plugin`):
 *
 * - The menu lists the guides, in the order of `projectDocuments`, then the four entry
 *   points side by side (each grouped by kind), instead of one "Modules" folder.
 * - The TSDoc links to the guides are absolute URLs to the repository (`@see` in
 *   src/**): they must work in editor hovers and in an installed package, where a relative
 *   link has no base. On the site they lead to the site's own guide pages instead, so the
 *   site works offline and matches the version it documents.
 *
 * Run: `npm run docs`.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { Comment, Converter, MarkdownEvent, ReflectionKind } from 'typedoc';

/** @param {import('typedoc').Application} app */
export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_END, (context) => {
    // The project's groups are "Guides" and "Modules": showing them as two folders would
    // hide both behind a click. Each module keeps its groups (classes, functions …).
    const project = context.project;
    project.comment ??= new Comment();
    project.comment.modifierTags.add('@hideGroups');
  });

  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const repository = String(pkg.repository?.url ?? '')
    .replace(/^git\+/, '')
    .replace(/\.git$/, '');
  if (!repository.startsWith('https://')) throw new Error('typedoc-site: package.json has no https repository.url');
  const escaped = repository.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const guideUrl = new RegExp(`${escaped}/blob/[^/\\s)]+/docs/([\\w-]+\\.md)(#[\\w-]+)?`, 'g');

  app.renderer.on(
    MarkdownEvent.PARSE,
    (event) => {
      if (!event.parsedText.includes(repository)) return;
      const guides = new Map();
      for (const doc of event.page.project.getReflectionsByKind(ReflectionKind.Document)) {
        const path = app.files.getReflectionPath(doc);
        if (path) guides.set(basename(path), doc);
      }
      event.parsedText = event.parsedText.replace(guideUrl, (url, file, anchor = '') => {
        const doc = guides.get(file);
        if (!doc) {
          app.logger.warn(`typedoc-site: ${url} names no guide of projectDocuments`);
          return url;
        }
        return app.renderer.router.relativeUrl(event.page.model, doc) + anchor;
      });
    },
    // Before the markdown becomes HTML (typedoc's own handler has priority 0).
    100,
  );
}
