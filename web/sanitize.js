// Sanitise an agent's `html` feature before it reaches the page.
//
// The markup is parsed inert (DOMParser does not run scripts or load resources) and then
// rebuilt element by element in the live document from an allow-list: anything not listed is
// dropped, so a new attack vector in some exotic tag or attribute never needs a rule here.

/** Tags kept as they are. Others are unwrapped (their text kept) unless listed in DROP. */
const TAGS = new Set([
  "a", "abbr", "b", "blockquote", "br", "caption", "code", "dd", "del", "div", "dl", "dt", "em",
  "figcaption", "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd",
  "li", "mark", "ol", "p", "pre", "q", "s", "small", "span", "strong", "sub", "sup", "table",
  "tbody", "td", "tfoot", "th", "thead", "time", "tr", "u", "ul",
]);

/** Tags removed together with everything inside them. */
const DROP = new Set([
  "script", "style", "template", "iframe", "frame", "frameset", "object", "embed", "noscript",
  "noembed", "svg", "math", "form", "input", "button", "select", "textarea", "link", "meta",
  "base", "head", "title", "audio", "video", "source", "track", "canvas", "applet", "portal",
]);

/** Attributes allowed per tag ("*": on every allowed tag). No style: an agent could draw a
 * fixed-position overlay over the page's own controls. No event handlers, ever. */
const ATTRS = {
  "*": new Set(["title", "lang", "dir"]),
  a: new Set(["href"]),
  img: new Set(["src", "alt", "width", "height"]),
  td: new Set(["colspan", "rowspan"]),
  th: new Set(["colspan", "rowspan", "scope"]),
  ol: new Set(["start", "reversed"]),
  time: new Set(["datetime"]),
};

const URL_ATTRS = new Set(["href", "src"]);

/** Whether `value` is a safe URL for `attr` of `tag`: http(s) anywhere, mailto for links,
 * raster data: images for img (no SVG, no javascript:, no other schemes). */
export function safeUrl(tag, attr, value) {
  let url;
  try {
    url = new URL(value.trim(), document.baseURI);
  } catch {
    return false;
  }
  if (url.protocol === "http:" || url.protocol === "https:") return true;
  if (tag === "a" && attr === "href") return url.protocol === "mailto:";
  if (tag === "img" && attr === "src") {
    return /^data:image\/(png|jpeg|gif|webp|avif);/i.test(value.trim());
  }
  return false;
}

function copyAttributes(from, to, tag) {
  for (const { name, value } of Array.from(from.attributes)) {
    const allowed = ATTRS["*"].has(name) || (ATTRS[tag] && ATTRS[tag].has(name));
    if (!allowed) continue;
    if (URL_ATTRS.has(name) && !safeUrl(tag, name, value)) continue;
    to.setAttribute(name, value);
  }
  if (tag === "a") {
    // Agent links open elsewhere and get no handle on this page.
    to.setAttribute("target", "_blank");
    to.setAttribute("rel", "noopener noreferrer nofollow");
  }
  if (tag === "img") {
    to.setAttribute("loading", "lazy");
    to.setAttribute("referrerpolicy", "no-referrer");
  }
}

function rebuild(source, target, depth) {
  // Deeply nested markup is either broken or hostile; cut it rather than recurse without end.
  if (depth > 32) return;
  for (const node of Array.from(source.childNodes)) {
    if (node.nodeType === Node.TEXT_NODE) {
      target.appendChild(document.createTextNode(node.nodeValue));
      continue;
    }
    if (node.nodeType !== Node.ELEMENT_NODE) continue; // comments, processing instructions
    const tag = node.localName;
    if (DROP.has(tag)) continue;
    if (!TAGS.has(tag)) {
      rebuild(node, target, depth + 1); // unknown tag: keep its content, lose the tag
      continue;
    }
    const copy = document.createElement(tag);
    copyAttributes(node, copy, tag);
    rebuild(node, copy, depth + 1);
    target.appendChild(copy);
  }
}

/** Bounds checked before the markup is parsed at all (the gateway applies the same ones): the
 * browser's HTML parser is superlinear on deep nesting (50 000 nested <b> froze a page 6 s), so
 * markup over them is never handed to it. */
export const MAX_HTML_CHARS = 64 * 1024;
export const MAX_HTML_DEPTH = 32;
const VOID = new Set([
  "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
  "track", "wbr",
]);
/** Elements whose end tag may be left out (a second <li> closes the first): not counted. */
const OPTIONAL_END = new Set(["p", "li", "dt", "dd", "tr", "td", "th", "option", "optgroup"]);

/** Why `html` is not parsed (too large, nested too deep), or null. One linear scan: depth is
 * estimated from start and end tags, which over- rather than under-counts. */
export function htmlTooHostile(html) {
  if (html.length > MAX_HTML_CHARS) return "too large to show";
  let depth = 0;
  // The name ends where a space, "/" or ">" begins, so the name and the rest cannot split a
  // run of letters in more than one way: with `[^\s/<>]*[^<>]*?` they could, and "<a" then
  // 60 000 letters with no ">" took seconds (quadratic backtracking).
  for (const m of html.matchAll(/<(\/?)([A-Za-z][^\s/<>]*)([\s/][^<>]*)?>/g)) {
    const tag = m[2].toLowerCase();
    if (VOID.has(tag) || OPTIONAL_END.has(tag) || (m[3] || "").endsWith("/")) continue;
    if (m[1]) depth = Math.max(0, depth - 1);
    else if (++depth > MAX_HTML_DEPTH) return "nested too deeply to show";
  }
  return null;
}

/** A DocumentFragment of the live document holding the sanitised rendering of `html`.
 * Markup over the bounds is shown as its bare text (tags stripped by one linear pass). */
export function sanitizeHtml(html) {
  const text = String(html);
  const fragment = document.createDocumentFragment();
  if (htmlTooHostile(text)) {
    const bare = text.replace(/<[^>]*>?/g, " ").replace(/\s+/g, " ");
    fragment.appendChild(document.createTextNode(bare.trim()));
    return fragment;
  }
  const parsed = new DOMParser().parseFromString(text, "text/html");
  rebuild(parsed.body, fragment, 0);
  return fragment;
}
