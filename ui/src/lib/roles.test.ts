import { describe, expect, it } from "vitest";
import { roleRefusal } from "./roles";

describe("roleRefusal", () => {
  it("refuses what the role may not do, naming the role it needs", () => {
    expect(roleRefusal("viewer", "admin", "creating an endpoint")).toBe(
      "This token's role is viewer: creating an endpoint needs an admin token.",
    );
    expect(roleRefusal("viewer", "operator", "a replay")).toBe(
      "This token's role is viewer: a replay needs an operator or admin token.",
    );
    expect(roleRefusal("operator", "admin", "deleting")).toMatch(/role is operator/);
    expect(roleRefusal("edge", "operator", "a replay")).toMatch(/role is edge/);
  });

  it("lets through what the role may do, and everything while the role is unknown", () => {
    expect(roleRefusal("operator", "operator", "a replay")).toBeNull();
    expect(roleRefusal("admin", "admin", "deleting")).toBeNull();
    expect(roleRefusal(null, "admin", "deleting")).toBeNull();
    expect(roleRefusal(undefined, "admin", "deleting")).toBeNull();
  });
});
