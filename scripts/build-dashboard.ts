// `npm test` builds the dashboard once, before the test files that
// start it run side by side (test/support/global-setup.ts then finds it current).
import { buildDashboardIfNeeded } from "../test/support/web-server";

buildDashboardIfNeeded();
