package shop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import instr.Counts;
import org.junit.jupiter.api.Test;

/** Call and allocation budgets asserted exactly, with the instr agent (examples/junit/run.sh). */
class CartTest {
    @Test
    void totalCallsWithTaxOncePerItemAndAllocatesNoReceipt() {
        Cart cart = new Cart(100, 250, 40);
        Counts.Snapshot s = Counts.snapshot();
        assertEquals(468, cart.total());
        assertEquals(3, s.calls("shop.Cart", "withTax"), "withTax calls");
        assertEquals(1, s.calls("shop.Cart", "total", "()J"), "total calls");
        assertEquals(0, s.allocations(Receipt.class), "Receipt allocations");
    }

    @Test
    void checkoutAllocatesExactlyOneReceipt() {
        Cart cart = new Cart(10, 20);
        long before = Counts.allocations(Receipt.class);
        cart.checkout();
        assertEquals(1, Counts.allocations(Receipt.class) - before);
    }

    @Test
    void resetZeroesTheCounts() {
        new Cart(1).total();
        Counts.reset();
        assertEquals(0, Counts.calls("shop.Cart", "withTax"));
    }

    @Test
    void methodsTheRulesDoNotSelectAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> Counts.calls("java.util.ArrayList", "add"));
    }
}
