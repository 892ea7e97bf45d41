import DashboardLayout from "../(dashboard)/layout";

// The delivery log wears the dashboard's header and navigation.
export default DashboardLayout;
