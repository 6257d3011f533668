package dev.warehouse.order.domain;

import java.math.BigDecimal;
import java.math.RoundingMode;

/** An amount of money, as {@code google.type.Money} has it: whole units and nano units of a currency. */
public record Money(String currencyCode, long units, int nanos) {

  private static final BigDecimal NANOS_PER_UNIT = BigDecimal.valueOf(1_000_000_000L);

  /** Zero of {@code currencyCode}. */
  public static Money zero(String currencyCode) {
    return new Money(currencyCode, 0, 0);
  }

  /** The amount as a decimal number of units (exact: nanos are 9 decimal places). */
  public BigDecimal amount() {
    return BigDecimal.valueOf(units).add(BigDecimal.valueOf(nanos).divide(NANOS_PER_UNIT));
  }

  /**
   * {@code amount} of {@code currencyCode} (non-negative, at most 9 decimal places).
   *
   * @throws ArithmeticException when the units do not fit a 64-bit integer
   */
  public static Money of(String currencyCode, BigDecimal amount) {
    BigDecimal whole = amount.setScale(0, RoundingMode.DOWN);
    int nanos = amount.subtract(whole).multiply(NANOS_PER_UNIT).intValueExact();
    return new Money(currencyCode, whole.longValueExact(), nanos);
  }

  /** This amount {@code quantity} times, in the same currency. */
  public Money times(long quantity) {
    return of(currencyCode, amount().multiply(BigDecimal.valueOf(quantity)));
  }

  /** This amount plus {@code other}, which must be of the same currency. */
  public Money plus(Money other) {
    if (!currencyCode.equals(other.currencyCode)) {
      throw new IllegalArgumentException("cannot add " + other.currencyCode + " to " + currencyCode);
    }
    return of(currencyCode, amount().add(other.amount()));
  }

  /** Equal amounts of the same currency, whatever their representation. */
  public boolean sameAs(Money other) {
    return currencyCode.equals(other.currencyCode) && amount().compareTo(other.amount()) == 0;
  }

  @Override
  public String toString() {
    return amount().stripTrailingZeros().toPlainString() + " " + currencyCode;
  }
}
