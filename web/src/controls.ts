// Small accessible controls: a segmented radio group and a status line for a card.

import { h, replace } from "./dom.js";

let groupCount = 0;

export type RadioGroup<T extends string | number> = { element: HTMLFieldSetElement; set(value: T): void };

/** A `<fieldset>` of radio buttons drawn as a segmented control; keyboard works natively. */
export function radioGroup<T extends string | number>(options: {
  legend: string;
  choices: readonly { value: T; label: string; title?: string }[];
  selected: T;
  onChange: (value: T) => void;
  name?: string;
}): RadioGroup<T> {
  const name = options.name ?? `group-${++groupCount}`;
  const inputs = new Map<T, HTMLInputElement>();
  const element = h(
    "fieldset",
    { class: "segmented", "data-group": name },
    h("legend", { class: "segmented-legend" }, options.legend),
  );
  for (const choice of options.choices) {
    const input = h("input", {
      type: "radio",
      name,
      value: String(choice.value),
      checked: choice.value === options.selected,
      onchange: () => options.onChange(choice.value),
    });
    inputs.set(choice.value, input);
    element.append(h("label", { class: "segment", title: choice.title }, input, h("span", {}, choice.label)));
  }
  return {
    element,
    set(value) {
      const input = inputs.get(value);
      if (input) input.checked = true;
    },
  };
}

export type CardState = "loading" | "ready" | "empty" | "error";

/** Shows a card's state: a message over the content while loading, empty or failed. */
export function setCardState(card: HTMLElement, status: HTMLElement, state: CardState, message = ""): void {
  card.dataset.state = state;
  status.className = `card-status is-${state}`;
  status.setAttribute("role", state === "error" ? "alert" : "status");
  status.hidden = state === "ready" && message === "";
  replace(status, message);
}
