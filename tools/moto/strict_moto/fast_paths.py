"""Makes a transaction and a Query cost what they touch, not what the table holds, and a request not
redo what cannot change while moto serves (off with --plain).

moto 5 copies every table a TransactWriteItems names (copy.deepcopy, for its rollback), and each
Query sorts every item of the table before it picks the partition: both grow with the table, so a
benchmark's latency would climb as its own orders fill the table. Here a transaction saves only
the items it names and puts them back when moto cancels it; a Query on the table reads only its
partition; a Query on an index walks the items unsorted (moto sorts the matches itself). Same
results, checked by the tests that run against this launcher. Tables with streams are not
handled (a rollback would not retract stream records); ours have none.

For every request moto also lists its package directory (to tell whether the host it inferred names
one of its services) and the functions of the handler class (to tell whether it implements the
action). The directory does not change while the server runs, so it is listed once, at install.
The handler's functions change only while the launcher patches it, before it serves, and then a
function of the same name replaces each; they are listed once per class, at its first request.

moto writes every answer through a serializer that walks botocore's model of the output, asking each
of an AttributeValue's ten members for itself under each of its aliases: a third of the launcher's time,
most of it in the attribute values of the items it returns. An attribute value moto holds as a plain
dict of DynamoDB's own JSON (no binary, which moto keeps as bytes and the serializer encodes) is
written as it is: the walk would build the same dict.

An UpdateExpression is parsed twice a request (once to check its placeholders, once to apply it), and
the services send a few dozen distinct ones: each is parsed once. The parse tree is
only read, and the validator that fills it in works on a deep copy of its own.
"""
import copy
import functools

_TEXT = ("S", "N")
_TEXT_SETS = ("SS", "NS")

from strict_moto.items import item_key, put_back, transaction_items


def install_fast_paths(patches):
    import moto.backends as backends
    import moto.core.responses as responses
    import moto.dynamodb.models as backend_module
    from moto.dynamodb.models import DynamoDBBackend
    from moto.core.serialize import BaseJSONSerializer
    from moto.dynamodb.models.table import Table
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    class _KeepTables:
        """Stands in for the copy module inside moto's backend: tables are not copied."""

        @staticmethod
        def deepcopy(value, memo=None):
            return value if isinstance(value, Table) else copy.deepcopy(value, memo)

    def transact_write_items(original):
        def transact(self, transact_items):
            saved = []
            for _, table_name, attrs in transaction_items({"TransactItems": transact_items}):
                table = self.tables.get(table_name)
                key = item_key(table, attrs) if table is not None else None
                if key is not None:
                    saved.append((table, *key, copy.deepcopy(table.get_item(*key))))
            backend_module.copy = _KeepTables
            try:
                return original(self, transact_items)
            except BaseException:
                # Newest first: a key named twice is put back to what it was before the first write.
                for table, hash_key, range_key, item in reversed(saved):
                    put_back(table, hash_key, range_key, item)
                raise
            finally:
                backend_module.copy = copy
        return transact

    def query(original):
        def partition_query(self, hash_key, *args, **kwargs):
            index_name = args[6] if len(args) > 6 else kwargs.get("index_name")
            if index_name:
                items = self.items
                self.all_items = lambda: [i for part in items.values()
                                          for i in (part.values() if isinstance(part, dict) else (part,))]
            elif hash_key is not None and self.range_key_attr is not None:
                partition = self.items.get(hash_key, {})
                self.all_items = lambda: list(partition.values())
            else:
                return original(self, hash_key, *args, **kwargs)
            try:
                return original(self, hash_key, *args, **kwargs)
            finally:
                del self.all_items  # the instance attribute only shadowed the method for this call
        return partition_query

    def attribute_values_as_they_are(original):
        def serialize_structure(self, serialized, value, shape, key):
            if key and shape.name == "AttributeValue" and is_plain_attribute_value(value):
                serialized[self.get_serialized_name(shape, key)] = value  # as moto's _default_serialize does
                return None
            return original(self, serialized, value, shape, key)
        return serialize_structure

    def parsed_once(original):
        return staticmethod(functools.lru_cache(maxsize=1024)(original))

    def listed_once(original):
        modules = tuple(original())  # the names moto's generator yields, in its order
        return lambda: modules

    def listed_once_per_class(original):
        names = {}

        def method_names_from_class(clazz):
            if clazz not in names:
                names[clazz] = original(clazz)
            return list(names[clazz])  # a list of the caller's own, as moto gives
        return method_names_from_class

    patches.wrap(DynamoDBBackend, "transact_write_items", transact_write_items)
    patches.wrap(Table, "query", query)
    patches.wrap(BaseJSONSerializer, "_serialize_type_structure", attribute_values_as_they_are)
    patches.wrap(UpdateExpressionParser, "make", parsed_once)
    patches.wrap(backends, "list_of_moto_modules", listed_once)
    # responses.py imported moto's function by name: its own binding is the one call_action reads.
    patches.wrap(responses, "method_names_from_class", listed_once_per_class)


def is_plain_attribute_value(value):
    """Whether `value` is an AttributeValue in DynamoDB's JSON that the serializer would copy unchanged:
    one member, of text, booleans, sets of text, or lists and maps of the same; no binary."""
    if type(value) is not dict or len(value) != 1:
        return False
    (kind, inner), = value.items()
    if kind in _TEXT:
        return type(inner) is str
    if kind == "BOOL" or kind == "NULL":
        return type(inner) is bool
    if kind in _TEXT_SETS:
        return type(inner) is list and all(type(member) is str for member in inner)
    if kind == "M":
        # an empty name moto's walk would write differently (its members into the parent): left to it
        return type(inner) is dict and all(type(name) is str and name and is_plain_attribute_value(member)
                                           for name, member in inner.items())
    if kind == "L":
        return type(inner) is list and all(is_plain_attribute_value(member) for member in inner)
    return False
