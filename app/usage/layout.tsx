import DashboardLayout from "../(dashboard)/layout";

// The Usage page wears the dashboard's header and navigation.
export default DashboardLayout;
