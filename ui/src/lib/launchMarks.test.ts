import { expect, it } from "vitest";
import { launchMarks, markAnswer, markFirstRender, markScript } from "./launchMarks";

it("keeps the first time of each phase and fills in what never happened", () => {
  expect(launchMarks(50)).toEqual({
    script_ms: 0,
    first_render_ms: 50,
    first_answer_ms: null,
    shown_ms: 50,
  });
  markScript(90);
  markFirstRender(300);
  markAnswer(320);
  markAnswer(400);
  markFirstRender(410);
  expect(launchMarks(450)).toEqual({
    script_ms: 90,
    first_render_ms: 300,
    first_answer_ms: 320,
    shown_ms: 450,
  });
});
