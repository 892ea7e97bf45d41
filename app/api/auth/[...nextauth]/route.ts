import { handlers } from "../../../_server/auth";

export const { GET, POST } = handlers;
