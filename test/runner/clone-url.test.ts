import { expect, it } from "vitest";
import { cloneUrlFor } from "../../lib/runner/app-github";

it("derives the https clone URL from the App's API base: github.com, GitHub Enterprise, the simulator", () => {
  expect(cloneUrlFor("https://api.github.com", "acme/widgets")).toBe("https://github.com/acme/widgets.git");
  expect(cloneUrlFor("https://ghe.example.com/api/v3", "acme/widgets")).toBe("https://ghe.example.com/acme/widgets.git");
  expect(cloneUrlFor("https://ghe.example.com/api/v3/", "acme/widgets")).toBe("https://ghe.example.com/acme/widgets.git");
  expect(cloneUrlFor("http://127.0.0.1:4010", "demo-org/webapp")).toBe("http://127.0.0.1:4010/demo-org/webapp.git");
});
