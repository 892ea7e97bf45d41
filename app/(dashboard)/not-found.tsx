import { NotFoundNotice } from "../_components/not-found-notice";

// a dashboard page's notFound(): inside the dashboard layout, so the navigation stays
export default function DashboardNotFound() {
  return <NotFoundNotice />;
}
