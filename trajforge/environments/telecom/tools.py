"""The telecom toolkit: the agent's 8 reads and 5 writes on the account, and the customer's 6
tools on their own phone (``ToolKind.user``: the agent can only ask the customer to use them).
Writes replace records (copy-on-write)."""

from __future__ import annotations

from typing import Any

from trajforge.environments.base import ToolKind, Toolkit, tool
from trajforge.environments.kit import find
from trajforge.environments.telecom.data import (
    TOPUP_PRICE_PER_GB,
    TOPUP_SIZES,
    Bill,
    Customer,
    Device,
    Line,
    Plan,
    TelecomState,
    data_limit,
    money,
    screen,
)
from trajforge.environments.telecom.policy import topup_gb, write_breaches
from trajforge.errors import ToolError


class TelecomTools(Toolkit):
    state: TelecomState

    # --- helpers (not tools) ---
    def write_breaches(self, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
        return write_breaches(self.state, name, args)

    def _customer(self, customer_id: str) -> Customer:
        return find(self.state.customers, customer_id, "customer")

    def _line(self, phone_number: str) -> Line:
        return find(self.state.lines, phone_number, "line")

    def _device(self, number: str) -> Device:
        device = self.state.devices.get(number)
        if device is None:
            raise ToolError(f"no phone with number {number}")
        return device

    def _line_view(self, line: Line) -> dict[str, Any]:
        plan = self.state.plans[line.plan_id]
        limit = data_limit(self.state, line)
        return {"number": line.number, "customer_id": line.customer_id, "status": line.status,
                "plan_id": plan.id, "plan_name": plan.name, "monthly_price": plan.monthly_price,
                "data_used_gb": line.data_used_gb, "data_limit_gb": limit,
                "data_left_gb": round(max(0.0, limit - line.data_used_gb), 2),
                "topup_gb": line.topup_gb, "roaming_enabled": line.roaming_enabled,
                "plan_changed_this_cycle": line.plan_changed_this_cycle}

    def _set_device(self, number: str, **changes: Any) -> dict[str, str]:
        device = self._device(number)
        self.state.devices[number] = device.model_copy(update=changes)
        return screen(self.state, number)

    # --- identification ---
    @tool(ToolKind.read)
    def find_customer_by_phone(self, phone_number: str, pin: str) -> str:
        """Find the customer id of a line's account holder, checked with the account PIN.

        Args:
            phone_number: A phone number of the account, e.g. "415-555-0123".
            pin: The account's 4-digit PIN.
        """
        line = self.state.lines.get(phone_number)
        if line is None or self.state.customers[line.customer_id].pin != pin:
            raise ToolError("no account matches this phone number and PIN")
        return line.customer_id

    @tool(ToolKind.read)
    def find_customer_by_email(self, email: str) -> str:
        """Find a customer id by the account email.

        Args:
            email: The email address on the account.
        """
        for customer in self.state.customers.values():
            if customer.email == email.strip().lower():
                return customer.id
        raise ToolError("no customer with this email")

    # --- reads ---
    @tool(ToolKind.read)
    def get_customer_details(self, customer_id: str) -> dict[str, Any]:
        """Get a customer's profile: name, email, home zip code, and a summary of their phone lines
        and bills.

        Args:
            customer_id: The customer id, e.g. "CU123456".
        """
        customer = self._customer(customer_id)
        lines = [self.state.lines[n] for n in customer.line_numbers]
        bills = [self.state.bills[b] for b in customer.bill_ids]
        return {"id": customer.id, "name": f"{customer.first_name} {customer.last_name}",
                "email": customer.email, "zip_code": customer.zip_code,
                "lines": [{k: v for k, v in self._line_view(x).items()
                           if k in ("number", "status", "plan_name", "monthly_price", "data_left_gb",
                                    "data_limit_gb", "roaming_enabled")} for x in lines],
                "bills": [{"id": b.id, "period": b.period, "amount": b.amount, "status": b.status}
                          for b in bills]}

    @tool(ToolKind.read)
    def get_line_details(self, phone_number: str) -> dict[str, Any]:
        """Get a phone line: status, plan, data used and allowance, top-ups, roaming.

        Args:
            phone_number: The line's phone number, e.g. "415-555-0123".
        """
        return self._line_view(self._line(phone_number))

    @tool(ToolKind.read)
    def list_plans(self) -> list[Plan]:
        """List the plans on offer: id, name, monthly data, price and whether roaming is included."""
        return list(self.state.plans.values())

    @tool(ToolKind.read)
    def get_bill_details(self, bill_id: str) -> Bill:
        """Get a bill: its billing period, amount, due date and status (paid, unpaid or overdue).

        Args:
            bill_id: The bill id, e.g. "B1234567".
        """
        return find(self.state.bills, bill_id, "bill")

    @tool(ToolKind.read)
    def check_network_outage(self, zip_code: str) -> dict[str, Any]:
        """Check whether the mobile network has a known outage in an area.

        Args:
            zip_code: The area's 5-digit zip code.
        """
        outage = self.state.outages.get(zip_code)
        if outage is None:
            return {"zip_code": zip_code, "outage": False, "details": "no known outage"}
        return {"zip_code": zip_code, "outage": True, "details": outage.description,
                "estimated_fix": outage.estimated_fix}

    @tool(ToolKind.read)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation over to a human agent, with a summary of the customer's issue.

        Args:
            summary: What the customer needs and what was found so far.
        """
        if not summary.strip():
            raise ToolError("a summary is required")
        return "Transfer successful"

    # --- writes ---
    @tool(ToolKind.write)
    def enable_roaming(self, phone_number: str) -> dict[str, Any]:
        """Enable international roaming on a line (the account side; the phone's own roaming
        setting is the customer's).

        Args:
            phone_number: The line's phone number.
        """
        line = self._line(phone_number)
        if line.roaming_enabled:
            raise ToolError(f"roaming is already enabled on {phone_number}")
        self.state.lines[phone_number] = line.model_copy(update={"roaming_enabled": True})
        return self._line_view(self.state.lines[phone_number])

    @tool(ToolKind.write)
    def change_plan(self, phone_number: str, plan_id: str) -> dict[str, Any]:
        """Move a line to another plan from today.

        Args:
            phone_number: The line's phone number.
            plan_id: The new plan's id: "basic_5", "plus_15", "max_40", "travel_20" or "unlimited_100".
        """
        line = self._line(phone_number)
        if plan_id not in self.state.plans:
            raise ToolError(f"plan {plan_id} not found")
        self.state.lines[phone_number] = line.model_copy(
            update={"plan_id": plan_id, "plan_changed_this_cycle": True})
        return self._line_view(self.state.lines[phone_number])

    @tool(ToolKind.write)
    def add_data_topup(self, phone_number: str, size: str) -> dict[str, Any]:
        """Add extra data to a line for the rest of the billing cycle, charged to the next bill.

        Args:
            phone_number: The line's phone number.
            size: The top-up size: "1GB", "2GB", "5GB" or "10GB".
        """
        line = self._line(phone_number)
        if size not in TOPUP_SIZES:
            raise ToolError(f"size must be one of {', '.join(TOPUP_SIZES)}")
        gb = topup_gb(size)
        self.state.lines[phone_number] = line.model_copy(update={"topup_gb": line.topup_gb + gb})
        return {**self._line_view(self.state.lines[phone_number]),
                "charge": float(money(gb * TOPUP_PRICE_PER_GB))}

    @tool(ToolKind.write)
    def pay_bill(self, bill_id: str) -> Bill:
        """Pay a bill in full with the payment card on file.

        Args:
            bill_id: The bill id.
        """
        bill = find(self.state.bills, bill_id, "bill")
        self.state.bills[bill_id] = bill.model_copy(update={"status": "paid"})
        return self.state.bills[bill_id]

    @tool(ToolKind.write)
    def resume_line(self, phone_number: str) -> dict[str, Any]:
        """Resume a suspended line.

        Args:
            phone_number: The line's phone number.
        """
        line = self._line(phone_number)
        self.state.lines[phone_number] = line.model_copy(update={"status": "active"})
        return self._line_view(self.state.lines[phone_number])

    # --- the customer's own phone (user tools) ---
    @tool(ToolKind.user)
    def check_status_bar(self, number: str) -> dict[str, str]:
        """Look at the phone's status bar and quick settings: signal, mobile data indicator,
        airplane mode, mobile data, roaming, APN and SIM.

        Args:
            number: Your own phone number (the phone in your hand).
        """
        self._device(number)
        return screen(self.state, number)

    @tool(ToolKind.user)
    def toggle_airplane_mode(self, number: str) -> dict[str, str]:
        """Switch airplane mode on if it is off, off if it is on.

        Args:
            number: Your own phone number (the phone in your hand).
        """
        return self._set_device(number, airplane_mode=not self._device(number).airplane_mode)

    @tool(ToolKind.user)
    def toggle_mobile_data(self, number: str) -> dict[str, str]:
        """Switch mobile data on if it is off, off if it is on.

        Args:
            number: Your own phone number (the phone in your hand).
        """
        return self._set_device(number, mobile_data=not self._device(number).mobile_data)

    @tool(ToolKind.user)
    def toggle_device_roaming(self, number: str) -> dict[str, str]:
        """Switch the phone's data roaming setting on if it is off, off if it is on.

        Args:
            number: Your own phone number (the phone in your hand).
        """
        return self._set_device(number, roaming=not self._device(number).roaming)

    @tool(ToolKind.user)
    def reset_apn_settings(self, number: str) -> dict[str, str]:
        """Reset the phone's access point (APN) settings to the provider's standard ones.

        Args:
            number: Your own phone number (the phone in your hand).
        """
        return self._set_device(number, apn="standard")

    @tool(ToolKind.user)
    def restart_device(self, number: str) -> dict[str, str]:
        """Turn the phone off and on again (the SIM card is read again).

        Args:
            number: Your own phone number (the phone in your hand).
        """
        return self._set_device(number, sim="ready")
