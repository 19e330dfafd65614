import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { DeliveryState, DeliveryView, EventView } from "../../ipc/bindings";
import { mockCommands, renderUi } from "../../test/render";
import { EventLookup, isEventId } from "./EventLookup";

const delivery = (id: string, target: string, state: DeliveryState): DeliveryView => ({
  id,
  event_id: "evt_0193aa",
  event_type: "order.paid",
  endpoint: "orders",
  flow: `to-${target}`,
  target,
  mode: "async_inline",
  state,
  attempts_made: state === "dead" ? 5 : 1,
  max_attempts: 5,
  next_attempt_at: null,
  created_at: Date.now() - 60_000,
  dead_at: state === "dead" ? Date.now() - 1_000 : null,
  exhausted_hop: state === "dead" ? "control_plane_webhook" : null,
  error_class: state === "dead" ? "http_5xx" : null,
  last_status_code: state === "dead" ? 503 : 200,
  replay_session: null,
  replay_of: null,
  replayed_by: null,
  attempts: [],
});

const event: EventView = {
  id: "evt_0193aa",
  endpoint: "orders",
  event_type: "order.paid",
  event_key: "order-42",
  payload: { n: 1 },
  created_at: Date.now() - 60_000,
  deliveries: [delivery("dlv_ok", "crm", "succeeded"), delivery("dlv_dead", "erp", "dead")],
};

describe("EventLookup", () => {
  it("tells an event id from an event key", () => {
    expect(isEventId("evt_0193aa7bc")).toBe(true);
    expect(isEventId("order-42")).toBe(false);
    expect(isEventId("evt_ with space")).toBe(false);
  });

  it("finds events by key (and endpoint), shows every delivery, and opens a dead one's DLQ entry", async () => {
    const calls = mockCommands({
      find_events: ({ eventKey }) => ({
        items: eventKey === "order-42" ? [event] : [],
        more: false,
      }),
    });
    const opened: string[] = [];
    renderUi(<EventLookup onDelivery={(id) => opened.push(id)} />);
    fireEvent.change(screen.getByTestId("event-lookup"), { target: { value: " order-42 " } });
    fireEvent.change(screen.getByTestId("event-lookup-endpoint"), { target: { value: "orders" } });
    fireEvent.click(screen.getByTestId("event-lookup-find"));

    const dead = await screen.findByTestId("found-delivery-dlv_dead");
    expect(calls.filter(([c]) => c === "find_events").map(([, a]) => a)).toEqual([
      { profile: "sandbox", eventKey: "order-42", endpoint: "orders" },
    ]);
    expect(within(dead).getByTestId("found-state")).toHaveTextContent("dead");
    expect(within(dead).getByText("HTTP 503")).toBeInTheDocument();
    expect(within(dead).getByText("5/5")).toBeInTheDocument();
    const ok = screen.getByTestId("found-delivery-dlv_ok");
    expect(within(ok).getByTestId("found-state")).toHaveTextContent("succeeded");
    expect(screen.getByTestId("found-event")).toHaveTextContent(
      "order.paid on orders (key order-42)",
    );

    fireEvent.click(within(dead).getByRole("button", { name: "DLQ entry" }));
    fireEvent.click(within(ok).getByRole("button", { name: "Timeline" }));
    expect(opened).toEqual(["dlv_dead", "dlv_ok"]);
  });

  it("an event id goes to get_event; an unknown key says so", async () => {
    const calls = mockCommands({
      get_event: ({ id }) => ({ ...event, id }),
      find_events: () => ({ items: [], more: false }),
    });
    renderUi(<EventLookup onDelivery={() => {}} />);
    const input = screen.getByTestId("event-lookup");
    fireEvent.change(input, { target: { value: "evt_0193aa" } });
    fireEvent.keyDown(input, { key: "Enter" });
    expect(await screen.findByTestId("found-delivery-dlv_dead")).toBeInTheDocument();
    expect(calls.map(([c]) => c)).toEqual(["get_event"]);

    fireEvent.change(input, { target: { value: "no-such-key" } });
    fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() =>
      expect(screen.getByTestId("found-nothing")).toHaveTextContent(
        "No event with key no-such-key",
      ),
    );
  });
});
