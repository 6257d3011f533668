package dev.warehouse.runtime.dynamo;

/** Names of the one table's key attributes and index, shared by every aggregate. */
public final class SingleTable {

  public static final String PK = "PK";
  public static final String SK = "SK";
  /** The "second door": GSI1 re-keys items for A4 (products in a warehouse). */
  public static final String GSI1 = "GSI1";
  public static final String GSI1_PK = "GSI1PK";
  public static final String GSI1_SK = "GSI1SK";
  /** Epoch seconds after which DynamoDB's TTL may delete an item (idempotency records). */
  public static final String EXPIRE_AT = "expire_at";

  private SingleTable() {}
}
