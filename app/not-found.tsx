import { NotFoundNotice } from "./_components/not-found-notice";
import DashboardLayout from "./(dashboard)/layout";

// an address no route matches: answered 404 in the dashboard's header and navigation
export default function NotFound() {
  return (
    <DashboardLayout>
      <NotFoundNotice />
    </DashboardLayout>
  );
}
