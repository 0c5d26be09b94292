// A small element builder. Text from the API always goes in as text nodes, never as HTML, so a
// token named `<img onerror=…>` is shown, not run.

type Child = Node | string | number | null | undefined | false;

type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>;

/** `h("a", { href: "#/", class: "x", onclick: fn }, "text", child)`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.replace(/^on/, ""), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** Replaces all children of `parent`. */
export function replace(parent: Node, ...children: Child[]): void {
  while (parent.firstChild) parent.removeChild(parent.firstChild);
  append(parent, children);
}

/**
 * A link to another site (a block explorer) in a new tab, without the page's address as referrer
 * and without a handle on this window; plain text when there is no link.
 */
export function externalLink(href: string | undefined, title: string, ...children: Child[]): HTMLElement {
  if (href === undefined) return h("span", { title }, ...children);
  return h("a", { href, title, target: "_blank", rel: "noopener noreferrer", class: "ext" }, ...children);
}
