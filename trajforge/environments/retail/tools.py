"""The retail toolkit: 7 reads, 7 writes. Writes replace records (copy-on-write)."""

from __future__ import annotations

from typing import Any

from trajforge.environments.base import ToolKind, Toolkit, tool
from trajforge.environments.kit import find
from trajforge.environments.retail.data import (
    Address,
    Customer,
    Order,
    Payment,
    Product,
    RetailState,
)
from trajforge.environments.retail.policy import price_difference, write_breaches
from trajforge.errors import ToolError


class RetailTools(Toolkit):
    state: RetailState

    # --- helpers (not tools) ---
    def _order(self, order_id: str) -> Order:
        return find(self.state.orders, order_id, "order")

    def _customer(self, customer_id: str) -> Customer:
        return find(self.state.customers, customer_id, "customer")

    def write_breaches(self, name: str, args: dict[str, Any]) -> list[tuple[str, str]]:
        return write_breaches(self.state, name, args)

    def _check_items(self, order: Order, item_ids: list[str], new_item_ids: list[str] | None) -> None:
        if not item_ids:
            raise ToolError("item_ids must not be empty")
        if len(set(item_ids)) != len(item_ids):
            raise ToolError("item_ids must not repeat")
        for item_id in item_ids:
            if order.item(item_id) is None:
                raise ToolError(f"item {item_id} is not in order {order.id}")
        if new_item_ids is not None and len(new_item_ids) != len(item_ids):
            raise ToolError("new_item_ids must pair one to one with item_ids")

    def _move_money(self, customer_id: str, method_id: str, amount: float) -> None:
        """Charge (amount > 0) or refund (amount < 0) a gift card's balance."""
        customer = self.state.customers[customer_id]
        method = customer.payment_method(method_id)
        if method is None:
            raise ToolError(f"payment method {method_id} not found for customer {customer_id}")
        if method.kind != "gift_card" or amount == 0:
            return
        updated = method.model_copy(update={"balance": round((method.balance or 0.0) - amount, 2)})
        methods = tuple(updated if m.id == method_id else m for m in customer.payment_methods)
        self.state.customers[customer_id] = customer.model_copy(update={"payment_methods": methods})

    def _put(self, order: Order, **changes: Any) -> Order:
        new = order.model_copy(update=changes)
        self.state.orders[order.id] = new
        return new

    def _swap(self, tool_name: str, order_id: str, item_ids: list[str], new_item_ids: list[str],
              payment_method_id: str) -> tuple[Order, tuple[Payment, ...]]:
        """Checks shared by item swaps; settles the price difference and returns the payments."""
        order = self._order(order_id)
        self._check_items(order, item_ids, new_item_ids)
        diff = price_difference(self.state, order_id, item_ids, new_item_ids)
        self._move_money(order.customer_id, payment_method_id, diff)
        payments = order.payments
        if diff:
            payments += (Payment(kind="payment" if diff > 0 else "refund",
                                 payment_method_id=payment_method_id, amount=abs(diff)),)
        return order, payments

    # --- reads ---
    @tool(ToolKind.read)
    def find_customer_id_by_email(self, email: str) -> str:
        """Find a customer's id by their email address.

        Args:
            email: The customer's email, e.g. "ava.smith123@example.com".
        """
        wanted = email.strip().lower()
        for customer in self.state.customers.values():
            if customer.email == wanted:
                return customer.id
        raise ToolError(f"no customer with email {email}")

    @tool(ToolKind.read)
    def find_customer_id_by_name_zip(self, first_name: str, last_name: str, zip: str) -> str:
        """Find a customer's id by first name, last name and zip code.

        Args:
            first_name: The customer's first name, e.g. "Ava".
            last_name: The customer's last name, e.g. "Smith".
            zip: The zip code of the customer's address, e.g. "78701".
        """
        key = (first_name.strip().lower(), last_name.strip().lower(), zip.strip())
        for customer in self.state.customers.values():
            if (customer.first_name.lower(), customer.last_name.lower(), customer.address.zip) == key:
                return customer.id
        raise ToolError("no customer with that name and zip code")

    @tool(ToolKind.read)
    def get_customer_details(self, customer_id: str) -> Customer:
        """Get a customer's profile: name, email, address, payment methods and order ids.

        Args:
            customer_id: The customer's id, e.g. "ava_smith_1234".
        """
        return self._customer(customer_id)

    @tool(ToolKind.read)
    def get_order_details(self, order_id: str) -> Order:
        """Get an order: status, date, items with prices, address, payment and refunds.

        Args:
            order_id: The order id, starting with "#W", e.g. "#W1234567".
        """
        return self._order(order_id)

    @tool(ToolKind.read)
    def get_product_details(self, product_id: str) -> Product:
        """Get a product and all its variants with options, prices and availability.

        Args:
            product_id: The product id, e.g. "6086499569".
        """
        product = self.state.products.get(product_id)
        if product is None:
            raise ToolError(f"product {product_id} not found")
        return product

    @tool(ToolKind.read)
    def list_product_types(self) -> dict[str, str]:
        """List every product type the store sells, as a map from name to product id."""
        return {p.name: p.id for p in self.state.products.values()}

    @tool(ToolKind.read)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent, with a summary of the customer's issue.

        Args:
            summary: What the customer needs and what was tried.
        """
        return "Transfer successful"

    # --- writes ---
    @tool(ToolKind.write)
    def cancel_pending_order(self, order_id: str, reason: str) -> Order:
        """Cancel a pending order and refund it to the original payment method.

        Args:
            order_id: The order id, e.g. "#W1234567".
            reason: Either "no longer needed" or "ordered by mistake".
        """
        order = self._order(order_id)
        self._move_money(order.customer_id, order.payment_method_id, -order.total)
        refund = Payment(kind="refund", payment_method_id=order.payment_method_id, amount=order.total)
        return self._put(order, status="cancelled", cancel_reason=reason,
                         payments=order.payments + (refund,))

    @tool(ToolKind.write)
    def modify_pending_order_address(self, order_id: str, address1: str, address2: str,
                                     city: str, state: str, zip: str) -> Order:
        """Change the shipping address of a pending order.

        Args:
            order_id: The order id, e.g. "#W1234567".
            address1: Street line, e.g. "12 Oak St".
            address2: Second line (apartment, suite), or "".
            city: City.
            state: Two-letter state code.
            zip: Five-digit zip code.
        """
        order = self._order(order_id)
        address = Address(address1=address1, address2=address2, city=city, state=state, zip=zip)
        return self._put(order, address=address)

    @tool(ToolKind.write)
    def modify_pending_order_payment(self, order_id: str, payment_method_id: str) -> Order:
        """Pay a pending order with another of the customer's payment methods; the old one is refunded.

        Args:
            order_id: The order id, e.g. "#W1234567".
            payment_method_id: The new payment method's id, e.g. "gift_card_1234567".
        """
        order = self._order(order_id)
        self._move_money(order.customer_id, payment_method_id, order.total)
        self._move_money(order.customer_id, order.payment_method_id, -order.total)
        payments = order.payments + (
            Payment(kind="payment", payment_method_id=payment_method_id, amount=order.total),
            Payment(kind="refund", payment_method_id=order.payment_method_id, amount=order.total),
        )
        return self._put(order, payment_method_id=payment_method_id, payments=payments)

    @tool(ToolKind.write)
    def modify_pending_order_items(self, order_id: str, item_ids: list[str],
                                   new_item_ids: list[str], payment_method_id: str) -> Order:
        """Swap items of a pending order for other variants of the same products (once per order).

        Args:
            order_id: The order id, e.g. "#W1234567".
            item_ids: Ids of the items to change.
            new_item_ids: Ids of the new variants, in the same order as item_ids.
            payment_method_id: Where the price difference is charged or refunded.
        """
        order, payments = self._swap("modify_pending_order_items", order_id, item_ids,
                                     new_item_ids, payment_method_id)
        swap = dict(zip(item_ids, new_item_ids, strict=True))  # _check_items pairs them
        items = []
        for item in order.items:
            if item.item_id in swap:
                variant = self.state.products[item.product_id].variant(swap[item.item_id])
                assert variant is not None  # checked by the policy
                item = item.model_copy(update={"item_id": variant.item_id,
                                               "options": variant.options, "price": variant.price})
            items.append(item)
        return self._put(order, items=tuple(items), items_modified=True, payments=payments)

    @tool(ToolKind.write)
    def return_delivered_order_items(self, order_id: str, item_ids: list[str],
                                     payment_method_id: str) -> Order:
        """Request a return of items of a delivered order; the refund goes to payment_method_id.

        Args:
            order_id: The order id, e.g. "#W1234567".
            item_ids: Ids of the items to return.
            payment_method_id: The original payment method or one of the customer's gift cards.
        """
        order = self._order(order_id)
        self._check_items(order, item_ids, None)
        amount = round(sum(order.known_item(i).price for i in item_ids), 2)  # _check_items found each
        self._move_money(order.customer_id, payment_method_id, -amount)
        refund = Payment(kind="refund", payment_method_id=payment_method_id, amount=amount)
        return self._put(order, status="return requested", returned_item_ids=tuple(item_ids),
                         payments=order.payments + (refund,))

    @tool(ToolKind.write)
    def exchange_delivered_order_items(self, order_id: str, item_ids: list[str],
                                       new_item_ids: list[str], payment_method_id: str) -> Order:
        """Request an exchange of items of a delivered order for other variants of the same products.

        Args:
            order_id: The order id, e.g. "#W1234567".
            item_ids: Ids of the items to exchange.
            new_item_ids: Ids of the new variants, in the same order as item_ids.
            payment_method_id: Where the price difference is charged or refunded.
        """
        order, payments = self._swap("exchange_delivered_order_items", order_id, item_ids,
                                     new_item_ids, payment_method_id)
        return self._put(order, status="exchange requested", exchanged_item_ids=tuple(item_ids),
                         payments=payments)

    @tool(ToolKind.write)
    def modify_customer_address(self, customer_id: str, address1: str, address2: str, city: str,
                                state: str, zip: str) -> Customer:
        """Change the default address on a customer's profile (existing orders keep theirs).

        Args:
            customer_id: The customer's id, e.g. "ava_smith_1234".
            address1: Street line, e.g. "12 Oak St".
            address2: Second line (apartment, suite), or "".
            city: City.
            state: Two-letter state code.
            zip: Five-digit zip code.
        """
        customer = self._customer(customer_id)
        address = Address(address1=address1, address2=address2, city=city, state=state, zip=zip)
        updated = customer.model_copy(update={"address": address})
        self.state.customers[customer_id] = updated
        return updated
