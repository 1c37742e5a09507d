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

/** A DocumentFragment of the live document holding the sanitised rendering of `html`. */
export function sanitizeHtml(html) {
  const parsed = new DOMParser().parseFromString(String(html), "text/html");
  const fragment = document.createDocumentFragment();
  rebuild(parsed.body, fragment, 0);
  return fragment;
}
