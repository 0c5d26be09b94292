// The hourly USD line card: range choice and the line chart of the token's USD price.

import { ApiError } from "../api.js";
import { createLineChart, type UsdLineChart } from "../charts.js";
import { radioGroup, setCardState } from "../controls.js";
import { h } from "../dom.js";
import { type LineDays, lineDays } from "../route.js";
import { isAbort, messageOf, type PageContext } from "./context.js";

export type LineCard = {
  element: HTMLElement;
  setDays(days: LineDays): void;
  /** Loads the line of the route's range; `quiet` (a live refresh) keeps the card's state meanwhile. */
  load(quiet?: boolean): Promise<void>;
  destroy(): void;
};

export function createLineCard(context: PageContext): LineCard {
  const { api, signal, tokenId, selection } = context;
  let seq = 0;
  let chart: UsdLineChart | undefined;

  const daysGroup = radioGroup({
    legend: "Range",
    name: "days",
    choices: lineDays.map((value) => ({ value, label: `${value}D`, title: `${value} days` })),
    selected: selection.route.days,
    onChange: (days) => context.navigate({ ...selection.route, days }),
  });
  const box = h("div", {
    class: "chart chart-line",
    id: "line-chart",
    "data-testid": "line-chart",
    role: "img",
    "aria-label": "USD price line chart",
  });
  const status = h("p", { class: "card-status" });
  const element = h(
    "section",
    { class: "card line-card", "aria-labelledby": "line-title" },
    h(
      "div",
      { class: "card-head" },
      h("h2", { id: "line-title" }, "USD price, hourly average"),
      daysGroup.element,
    ),
    h("div", { class: "chart-wrap" }, box, status),
  );

  return {
    element,
    setDays(days) {
      daysGroup.set(days);
    },
    async load(quiet = false) {
      const n = ++seq;
      const days = selection.route.days;
      if (!quiet) setCardState(element, status, "loading", "Loading USD prices…");
      try {
        const line = await api.lineChart(tokenId, days, signal);
        if (n !== seq) return;
        chart ??= createLineChart(box);
        chart.setLine(line);
        box.dataset.points = String(line.data.length);
        box.dataset.days = String(days);
        box.setAttribute(
          "aria-label",
          `USD price, hourly average over ${days} days, ${line.data.length} points`,
        );
        if (line.data.length === 0) setCardState(element, status, "empty", "No USD prices in this range.");
        else setCardState(element, status, "ready");
      } catch (error) {
        if (isAbort(error) || n !== seq) return;
        context.reportError(error);
        chart?.setLine({ labels: [], data: [] });
        box.dataset.points = "0";
        if (error instanceof ApiError && error.status === 404) {
          setCardState(
            element,
            status,
            "empty",
            `No USD prices in the last ${days} days (${error.message}).`,
          );
        } else setCardState(element, status, "error", messageOf(error));
      }
    },
    destroy() {
      chart?.destroy();
    },
  };
}
